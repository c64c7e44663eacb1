package dev.ratelimit.bench;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Latencies in whole microseconds, 0 to {@value #MAX_MICROS} µs (longer ones count in the last
 * bucket); safe to record from many threads at once.
 */
final class Histogram {
  static final int MAX_MICROS = 1_000_000;

  private final AtomicLongArray counts = new AtomicLongArray(MAX_MICROS + 1);

  void recordNanos(long nanos) {
    long micros = Math.max(0, nanos / 1_000);
    counts.incrementAndGet((int) Math.min(micros, MAX_MICROS));
  }

  long count() {
    long n = 0;
    for (int i = 0; i <= MAX_MICROS; i++) {
      n += counts.get(i);
    }
    return n;
  }

  /** The q-quantile (0 &lt; q &lt; 1) in µs, or NaN when nothing was recorded. */
  double quantileMicros(double q) {
    long n = count();
    if (n == 0) {
      return Double.NaN;
    }
    long rank = (long) Math.ceil(q * n);
    long seen = 0;
    for (int i = 0; i <= MAX_MICROS; i++) {
      seen += counts.get(i);
      if (seen >= Math.max(1, rank)) {
        return i;
      }
    }
    return MAX_MICROS;
  }
}

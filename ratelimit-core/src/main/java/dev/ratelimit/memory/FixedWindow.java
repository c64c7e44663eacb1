package dev.ratelimit.memory;

import dev.ratelimit.Decision;
import dev.ratelimit.Policy;

/** FIXED_WINDOW: a count {@code n} for the window starting at {@code s}; twin of fixed_window.lua. */
final class FixedWindow extends State {
  private long start = Long.MIN_VALUE;
  private long count;
  /** The window {@code start} was computed for (0: unknown). */
  private long startWindow;

  @Override
  Decision check(Policy p, long t, long c, boolean consume) {
    long window = p.windowMicros();
    long limit = p.limit();
    long s = windowStart(t, window, start, startWindow); // t − t mod W
    long n = start == s ? count : 0;
    long windowEnd = s + window - t;
    if (n + c <= limit) {
      if (consume) {
        start = s;
        startWindow = window;
        count = n + c;
        n += c;
        expiresAt = s + window;
      }
      return Decision.allowed(p, limit - n, n > 0 ? windowEnd : 0, 0);
    }
    return Decision.denied(p, Math.max(0, limit - n), windowEnd, windowEnd);
  }

  /** Snapshot: {@code [windowStart, count]}. */
  @Override
  void restore(long[] snapshot) {
    start = snapshot[0];
    startWindow = 0;
    count = snapshot[1];
  }

  @Override
  long computeExpiresAt(Policy p) {
    return start + p.windowMicros();
  }
}

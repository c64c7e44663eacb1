package dev.ratelimit;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * At most one log line per topic per interval, counting the lines it suppressed in between, so
 * that an outage or a flood of would-be denials cannot flood the log. Topics are policy names and
 * a few fixed ones; past {@value #MAX_TOPICS} topics the rest share one. Thread-safe.
 */
final class LogThrottle {
  static final int MAX_TOPICS = 1_000;
  private static final String OTHER = "\0other";

  private final LongSupplier nanoTime;
  private final long intervalNanos;
  private final ConcurrentMap<String, Slot> slots = new ConcurrentHashMap<>();

  LogThrottle(LongSupplier nanoTime, long intervalNanos) {
    this.nanoTime = nanoTime;
    this.intervalNanos = intervalNanos;
  }

  /**
   * Whether a line about {@code topic} may be written now: -1 if not (the line is counted as
   * suppressed), else the number of lines suppressed since the last one written.
   */
  long tryAcquire(String topic) {
    Slot slot = slots.get(topic);
    if (slot == null) {
      slot = slots.size() < MAX_TOPICS
          ? slots.computeIfAbsent(topic, t -> new Slot(nanoTime.getAsLong() - intervalNanos))
          : slots.computeIfAbsent(OTHER, t -> new Slot(nanoTime.getAsLong() - intervalNanos));
    }
    long now = nanoTime.getAsLong();
    long last = slot.lastAt.get();
    if (now - last >= intervalNanos && slot.lastAt.compareAndSet(last, now)) {
      return slot.suppressed.getAndSet(0);
    }
    slot.suppressed.incrementAndGet();
    return -1;
  }

  private static final class Slot {
    final AtomicLong lastAt;
    final AtomicLong suppressed = new AtomicLong();

    Slot(long lastAt) {
      this.lastAt = new AtomicLong(lastAt);
    }
  }
}

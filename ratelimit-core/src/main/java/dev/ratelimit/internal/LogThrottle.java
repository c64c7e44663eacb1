package dev.ratelimit.internal;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * At most one log line per topic per interval, counting the lines it suppressed in between, so
 * that an outage or a flood of bad requests cannot flood the log. Topics are policy names, places
 * in the configuration (a filter rule, an annotated method) and a few fixed ones; past
 * {@value #MAX_TOPICS} topics the rest share one. Thread-safe.
 *
 * <p>Internal: the one log throttle of the limiter, the servlet filter and the Spring Boot
 * starter. Not an API; it may change in any release.
 */
public final class LogThrottle {
  static final int MAX_TOPICS = 1_000;
  private static final String OTHER = "\0other";
  private static final int MAX_SANITIZED = 64;

  private final LongSupplier nanoTime;
  private final long intervalNanos;
  private final ConcurrentMap<String, Slot> slots = new ConcurrentHashMap<>();

  /**
   * A throttle on {@code nanoTime} ({@link System#nanoTime}, or a test's clock).
   *
   * @param intervalNanos the least time between two lines of one topic
   */
  public LogThrottle(LongSupplier nanoTime, long intervalNanos) {
    this.nanoTime = nanoTime;
    this.intervalNanos = intervalNanos;
  }

  /** One line a minute per topic, on {@link System#nanoTime()}. */
  public static LogThrottle perMinute() {
    return new LogThrottle(System::nanoTime, TimeUnit.MINUTES.toNanos(1));
  }

  /**
   * Whether a line about {@code topic} may be written now: -1 if not (the line is counted as
   * suppressed), else the number of lines suppressed since the last one written.
   */
  public long tryAcquire(String topic) {
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

  /**
   * Logs {@code message} at WARNING on {@code log}, unless a line about {@code topic} was logged
   * within the interval; the line says how many were left out since the last, and how often it
   * may come.
   *
   * @return whether it was logged
   */
  public boolean warn(System.Logger log, String topic, String message) {
    long suppressed = tryAcquire(topic);
    if (suppressed < 0) {
      return false;
    }
    log.log(System.Logger.Level.WARNING, message + note(suppressed));
    return true;
  }

  /** What a line logged after {@code suppressed} left-out ones ends with: their count, and how often lines may come. */
  public String note(long suppressed) {
    return (suppressed > 0 ? " (" + suppressed + " more since the last line)" : "") + " (logged at most " + every() + ")";
  }

  private String every() {
    long seconds = TimeUnit.NANOSECONDS.toSeconds(intervalNanos);
    return seconds == 60 ? "once a minute" : "once every " + seconds + " s";
  }

  /** {@code value} fit for a log line: at most 64 characters, control characters and surrogates replaced by {@code ?}. */
  public static String sanitize(Object value) {
    String s = String.valueOf(value);
    StringBuilder sb = new StringBuilder(Math.min(s.length(), MAX_SANITIZED) + 3);
    for (int i = 0; i < s.length() && i < MAX_SANITIZED; i++) {
      char c = s.charAt(i);
      sb.append(Character.isISOControl(c) || Character.isSurrogate(c) ? '?' : c);
    }
    return s.length() > MAX_SANITIZED ? sb.append("...").toString() : sb.toString();
  }

  private static final class Slot {
    final AtomicLong lastAt;
    final AtomicLong suppressed = new AtomicLong();

    Slot(long lastAt) {
      this.lastAt = new AtomicLong(lastAt);
    }
  }
}

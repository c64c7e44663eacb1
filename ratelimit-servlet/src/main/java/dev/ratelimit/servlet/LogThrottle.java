package dev.ratelimit.servlet;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * At most one log line per topic (a rule and what went wrong) per interval, so that a flood of
 * bad requests cannot flood the log. Topics come from configuration, so the map stays small.
 */
final class LogThrottle {
  private static final System.Logger LOG = System.getLogger(RateLimitFilter.class.getName());

  private final LongSupplier nanoTime;
  private final long intervalNanos;
  private final ConcurrentMap<String, AtomicLong> last = new ConcurrentHashMap<>();

  LogThrottle(LongSupplier nanoTime, long interval, TimeUnit unit) {
    this.nanoTime = nanoTime;
    this.intervalNanos = unit.toNanos(interval);
  }

  /** One line a minute per topic, on {@link System#nanoTime()}. */
  static LogThrottle perMinute() {
    return new LogThrottle(System::nanoTime, 1, TimeUnit.MINUTES);
  }

  /** Whether a line about {@code topic} may be logged now; if so, the next may in an interval. */
  boolean tryAcquire(String topic) {
    long now = nanoTime.getAsLong();
    AtomicLong at = last.computeIfAbsent(topic, t -> new AtomicLong(now - intervalNanos));
    long previous = at.get();
    return now - previous >= intervalNanos && at.compareAndSet(previous, now);
  }

  /** Logs {@code message} at WARNING unless a line about {@code topic} was logged within the interval. */
  void warn(String topic, String message) {
    if (tryAcquire(topic)) {
      log(message);
    }
  }

  /** Logs {@code message} at WARNING, after a {@link #tryAcquire} that allowed it. */
  void log(String message) {
    LOG.log(System.Logger.Level.WARNING, message + " (logged at most once a minute)");
  }

  /** {@code value} fit for a log line: at most 64 characters, control characters replaced. */
  static String sanitize(Object value) {
    String s = String.valueOf(value);
    StringBuilder sb = new StringBuilder(Math.min(s.length(), 64));
    for (int i = 0; i < s.length() && i < 64; i++) {
      char c = s.charAt(i);
      sb.append(Character.isISOControl(c) || Character.isSurrogate(c) ? '?' : c);
    }
    return s.length() > 64 ? sb.append("...").toString() : sb.toString();
  }
}

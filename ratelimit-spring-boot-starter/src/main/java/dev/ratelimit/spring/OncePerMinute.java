package dev.ratelimit.spring;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * At most one log line a minute per topic (a place in the configuration, a kind of failure), so
 * that a flood of bad requests cannot flood the log. Topics come from configuration: few.
 */
final class OncePerMinute {
  private static final long INTERVAL_NANOS = 60_000_000_000L;

  private final Map<String, Long> lastLogged = new ConcurrentHashMap<>();

  /** Whether a line about {@code topic} may be logged now; if so, the next may in a minute. */
  boolean tryAcquire(String topic) {
    long now = System.nanoTime();
    Long last = lastLogged.get(topic);
    if (last != null && now - last <= INTERVAL_NANOS) {
      return false;
    }
    return last == null ? lastLogged.putIfAbsent(topic, now) == null : lastLogged.replace(topic, last, now);
  }
}

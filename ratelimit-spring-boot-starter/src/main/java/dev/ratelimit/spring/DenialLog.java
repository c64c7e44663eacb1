package dev.ratelimit.spring;

import dev.ratelimit.Decision;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * One INFO line per denied call ({@code ratelimit.log-denials=true}), on the logger
 * {@value #LOGGER}, at most {@code maxPerSecond} lines in any second of {@link System#nanoTime()}:
 * a flood of denials cannot flood the log. A line counts the denials left out since the previous
 * one. The key is logged only when asked for, sanitised and shortened.
 *
 * <pre>
 * rate limit denied: source=filter policy=api outcome=denied retryAfterMs=1500
 * rate limit denied: source=com.example.Orders.place policy=burst outcome=denied retryAfterMs=200 key="u1" notLogged=7
 * </pre>
 */
final class DenialLog {
  /** The logger's name. */
  static final String LOGGER = "dev.ratelimit.denials";
  /** The most lines a second that can be configured (the counter's width). */
  static final int MAX_PER_SECOND = (1 << 20) - 1;

  private static final Logger LOG = Logger.getLogger(LOGGER);
  private static final int COUNT_BITS = 20;
  private static final long COUNT_MASK = (1L << COUNT_BITS) - 1;
  private static final int MAX_KEY_LENGTH = 128;

  private final boolean includeKey;
  private final int maxPerSecond;
  private final LongSupplier nanoTime;
  /** The current second (high bits) and the lines logged in it (low {@value #COUNT_BITS} bits). */
  private final AtomicLong window = new AtomicLong(Long.MIN_VALUE);
  private final AtomicLong notLogged = new AtomicLong();

  DenialLog(boolean includeKey, int maxPerSecond, LongSupplier nanoTime) {
    if (maxPerSecond < 1 || maxPerSecond > MAX_PER_SECOND) {
      throw new IllegalArgumentException("ratelimit.log-denials-max-per-second must be from 1 to "
          + MAX_PER_SECOND + ", was " + maxPerSecond);
    }
    this.includeKey = includeKey;
    this.maxPerSecond = maxPerSecond;
    this.nanoTime = nanoTime;
  }

  /**
   * Logs the denial of a call by {@code source} ({@code filter} or the annotated method), whose
   * limiting decision is {@code limiting}; {@code key} is logged only with include-key, and only
   * where it is known (null otherwise).
   */
  void denied(String source, Decision limiting, String key) {
    if (!LOG.isLoggable(Level.INFO)) {
      return;
    }
    if (!tryAcquire()) {
      notLogged.incrementAndGet();
      return;
    }
    StringBuilder line = new StringBuilder(160).append("rate limit denied: source=").append(sanitize(source))
        .append(" policy=").append(sanitize(limiting.policy().name()))
        .append(" outcome=").append(limiting.isDegraded() ? "failure_denied" : "denied")
        .append(" retryAfterMs=").append(ceilMillis(limiting.retryAfter()));
    if (includeKey && key != null) {
      line.append(" key=\"").append(sanitize(key).replace("\\", "\\\\").replace("\"", "\\\"")).append('"');
    }
    long missed = notLogged.getAndSet(0);
    if (missed > 0) {
      line.append(" notLogged=").append(missed);
    }
    LOG.log(Level.INFO, line.toString());
  }

  /** The most lines a second. */
  int maxPerSecond() {
    return maxPerSecond;
  }

  /** Whether one more line fits in the current second. */
  boolean tryAcquire() {
    long second = Math.floorDiv(nanoTime.getAsLong(), 1_000_000_000L);
    while (true) {
      long state = window.get();
      long current = state >> COUNT_BITS;
      long used = state & COUNT_MASK;
      long next;
      if (state == Long.MIN_VALUE || current != second) {
        next = (second << COUNT_BITS) | 1;
      } else if (used < maxPerSecond) {
        next = state + 1;
      } else {
        return false;
      }
      if (window.compareAndSet(state, next)) {
        return true;
      }
    }
  }

  private static long ceilMillis(Duration d) {
    long micros = d.getSeconds() * 1_000_000L + d.getNano() / 1_000;
    return (micros + 999) / 1_000;
  }

  /** At most {@value #MAX_KEY_LENGTH} characters, control characters and surrogates replaced by '?'. */
  private static String sanitize(String s) {
    int length = Math.min(s.length(), MAX_KEY_LENGTH);
    StringBuilder sb = new StringBuilder(length + 3);
    for (int i = 0; i < length; i++) {
      char c = s.charAt(i);
      sb.append(Character.isISOControl(c) || Character.isSurrogate(c) ? '?' : c);
    }
    return s.length() > MAX_KEY_LENGTH ? sb.append("...").toString() : sb.toString();
  }
}

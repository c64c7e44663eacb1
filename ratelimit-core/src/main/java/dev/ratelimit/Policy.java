package dev.ratelimit;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What to allow: {@code limit} units per {@code window}, evaluated by an {@link Algorithm}.
 *
 * <pre>{@code
 * Policy api = Policy.of(100, Duration.ofMinutes(1))     // GCRA, burst 100, name "100-per-PT1M-gcra"
 *     .withAlgorithm(Algorithm.TOKEN_BUCKET)
 *     .withBurst(20)
 *     .withName("api");
 * Policy login = Policy.parse("5/5m");                   // 5 per 5 minutes
 * }</pre>
 *
 * <p>The {@code name} identifies the policy's state in a backend: two policies with the same name
 * and algorithm share counters for a key, so a named policy can change its numbers at run time and
 * keep its keys. The default name is derived from the numbers, so unnamed policies never share.
 *
 * <p>{@code burst} is the capacity of {@link Algorithm#TOKEN_BUCKET}, {@link Algorithm#GCRA} and
 * {@link Algorithm#LEAKY_BUCKET} (defaults to {@code limit}); the window algorithms ignore it.
 *
 * <p>Limits of exact arithmetic: the window is a whole number of microseconds of at least 1 ms, and
 * for every algorithm but FIXED_WINDOW and SLIDING_LOG, capacity × window in microseconds is at most
 * 2<sup>52</sup> (about 52,000 per day or 1.25 million per hour), so that both backends, Java and
 * Lua, compute every decision exactly with the same integers. A SLIDING_LOG limit is at most
 * {@link #MAX_SLIDING_LOG_LIMIT} (it logs every admitted unit); a FIXED_WINDOW limit, and the window
 * of both, at most 2<sup>52</sup> (units; µs, about 142 years), for the same reason.
 *
 * @param limit units admitted per window, at least 1
 * @param window the window, at least 1 ms, a whole number of microseconds
 * @param algorithm the algorithm
 * @param burst the capacity of the bucket algorithms, at least 1
 * @param name the policy's name; its state identity in backends
 */
public record Policy(long limit, Duration window, Algorithm algorithm, long burst, String name) {

  /** The largest capacity × window (µs) for the algorithms that need it to compute exactly. */
  public static final long MAX_CAPACITY_TIMES_WINDOW_MICROS = 1L << 52;

  /**
   * The largest limit of a {@link Algorithm#SLIDING_LOG} policy, which logs every admitted unit (in
   * memory, in an array that grows by powers of two).
   */
  public static final long MAX_SLIDING_LOG_LIMIT = 1L << 30;

  private static final Pattern LIMIT = Pattern.compile("\\s*(\\d{1,18})\\s*");
  private static final Pattern WINDOW = Pattern.compile("\\s*(\\d{0,12})\\s*(ms|s|m|h|d)\\s*");

  /** Validates every component; see the class comment for the rules. */
  public Policy {
    Objects.requireNonNull(window, "window");
    Objects.requireNonNull(algorithm, "algorithm");
    Require.argument(limit >= 1, "limit must be at least 1, was %s", limit);
    Require.argument(burst >= 1, "burst must be at least 1, was %s", burst);
    Require.argument(!window.isNegative() && window.compareTo(Duration.ofMillis(1)) >= 0,
        "window must be at least 1 ms, was %s", window);
    Require.argument(window.getNano() % 1_000 == 0,
        "window must be a whole number of microseconds, was %s", window);
    Require.argument(window.compareTo(Duration.ofDays(365_000)) <= 0,
        "window must be at most 365,000 days, was %s", window);
    Require.argument(name != null && !name.isBlank(), "name must not be blank, was '%s'", name);
    Require.argument(algorithm != Algorithm.SLIDING_LOG || limit <= MAX_SLIDING_LOG_LIMIT,
        "SLIDING_LOG keeps every admitted unit of its window: limit must be at most %s, was %s; use "
            + "Policy.of(limit, window, Algorithm.SLIDING_WINDOW) for larger limits", MAX_SLIDING_LOG_LIMIT, limit);
    if (algorithm == Algorithm.FIXED_WINDOW || algorithm == Algorithm.SLIDING_LOG) {
      Require.argument(limit <= MAX_CAPACITY_TIMES_WINDOW_MICROS,
          "%s counts up to its limit exactly only to 2^52: limit must be at most %s, was %s",
          algorithm, MAX_CAPACITY_TIMES_WINDOW_MICROS, limit);
      Require.argument(micros(window) <= MAX_CAPACITY_TIMES_WINDOW_MICROS,
          "%s measures its window exactly only to 2^52 µs (about 142 years): window was %s", algorithm, window);
    } else {
      long capacity = algorithm.usesBurst() ? burst : limit;
      long micros = micros(window);
      Require.argument(capacity <= MAX_CAPACITY_TIMES_WINDOW_MICROS / micros,
          "%s × window is too large to compute exactly: %s × %s µs exceeds 2^52; use a shorter "
              + "window or a smaller %s, or Policy.of(limit, window, Algorithm.FIXED_WINDOW)",
          algorithm.usesBurst() ? "burst" : "limit", capacity, micros,
          algorithm.usesBurst() ? "burst" : "limit");
    }
  }

  /**
   * A GCRA policy of {@code limit} per {@code window}, burst equal to the limit, derived name.
   *
   * @throws IllegalArgumentException if limit &lt; 1 or window &lt; 1 ms
   */
  public static Policy of(long limit, Duration window) {
    Objects.requireNonNull(window, "window");
    return new Policy(limit, window, Algorithm.GCRA, limit, derivedName(limit, window, Algorithm.GCRA, limit));
  }

  /**
   * A policy of {@code limit} per {@code window} with {@code algorithm}, burst equal to the limit,
   * derived name. Prefer it to {@code of(limit, window).withAlgorithm(a)} for a large fixed window
   * that GCRA's exactness bound would refuse.
   */
  public static Policy of(long limit, Duration window, Algorithm algorithm) {
    Objects.requireNonNull(window, "window");
    Objects.requireNonNull(algorithm, "algorithm");
    return new Policy(limit, window, algorithm, limit, derivedName(limit, window, algorithm, limit));
  }

  /**
   * Parses {@code "N/unit"} or {@code "N/Kunit"} with units {@code ms s m h d}: {@code "100/1m"},
   * {@code "5/5m"}, {@code "10/s"}. The result is {@link #of(long, Duration)}'s GCRA policy.
   *
   * @throws IllegalArgumentException naming the spec when it does not parse
   */
  public static Policy parse(String spec) {
    int slash = spec == null ? -1 : spec.indexOf('/');
    Matcher m = slash < 0 ? null : LIMIT.matcher(spec.substring(0, slash));
    Require.argument(m != null && m.matches(),
        "cannot parse policy spec '%s': expected N/unit or N/Kunit with unit ms, s, m, h or d, "
            + "e.g. \"100/1m\" or \"5/5m\"", spec);
    Duration window;
    try {
      window = parseWindow(spec.substring(slash + 1), true);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("cannot parse policy spec '" + spec + "': " + e.getMessage(), e);
    }
    return of(Long.parseLong(m.group(1)), window);
  }

  /**
   * Parses a window such as {@code "1m"}, {@code "500ms"}, {@code "2h"}, {@code "1d"}: a whole
   * number and a unit {@code ms s m h d}.
   *
   * @throws IllegalArgumentException naming the text when it does not parse
   */
  public static Duration parseWindow(String text) {
    return parseWindow(text, false);
  }

  private static Duration parseWindow(String text, boolean amountOptional) {
    Matcher m = text == null ? null : WINDOW.matcher(text);
    Require.argument(m != null && m.matches() && (amountOptional || !m.group(1).isEmpty()),
        "cannot parse window '%s': expected a whole number and a unit ms, s, m, h or d, e.g. \"1m\" "
            + "or \"500ms\"", text);
    long amount = m.group(1).isEmpty() ? 1 : Long.parseLong(m.group(1));
    Require.argument(amount >= 1, "window amount in '%s' must be at least 1", text);
    ChronoUnit unit = switch (m.group(2)) {
      case "ms" -> ChronoUnit.MILLIS;
      case "s" -> ChronoUnit.SECONDS;
      case "m" -> ChronoUnit.MINUTES;
      case "h" -> ChronoUnit.HOURS;
      default -> ChronoUnit.DAYS;
    };
    try {
      return Duration.of(amount, unit);
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException("window '" + text + "' is too large", e);
    }
  }

  /** This policy with another algorithm; a derived name follows the change. */
  public Policy withAlgorithm(Algorithm algorithm) {
    Objects.requireNonNull(algorithm, "algorithm");
    return new Policy(limit, window, algorithm, burst, nameFor(limit, window, algorithm, burst));
  }

  /** This policy with another burst (capacity of the bucket algorithms); a derived name follows. */
  public Policy withBurst(long burst) {
    Require.argument(burst >= 1, "burst must be at least 1, was %s", burst);
    return new Policy(limit, window, algorithm, burst, nameFor(limit, window, algorithm, burst));
  }

  /** This policy with another limit; a derived name follows, and a burst equal to the limit too. */
  public Policy withLimit(long limit) {
    Require.argument(limit >= 1, "limit must be at least 1, was %s", limit);
    long newBurst = burst == this.limit ? limit : burst;
    return new Policy(limit, window, algorithm, newBurst, nameFor(limit, window, algorithm, newBurst));
  }

  /** This policy with an explicit name (its state identity in backends). */
  public Policy withName(String name) {
    return new Policy(limit, window, algorithm, burst, name);
  }

  /** The most units one check can ever pass: {@code burst} for bucket algorithms, else {@code limit}. */
  public long capacity() {
    return algorithm.usesBurst() ? burst : limit;
  }

  /** The window in microseconds. */
  public long windowMicros() {
    return micros(window);
  }

  /** Whether the name is the one derived from the numbers (no {@link #withName} was applied). */
  public boolean hasDerivedName() {
    return name.equals(derivedName(limit, window, algorithm, burst));
  }

  private String nameFor(long limit, Duration window, Algorithm algorithm, long burst) {
    return hasDerivedName() ? derivedName(limit, window, algorithm, burst) : name;
  }

  private static String derivedName(long limit, Duration window, Algorithm algorithm, long burst) {
    String base = limit + "-per-" + window + "-" + algorithm.name().toLowerCase(java.util.Locale.ROOT);
    return algorithm.usesBurst() && burst != limit ? base + "-burst-" + burst : base;
  }

  private static long micros(Duration d) {
    return d.getSeconds() * 1_000_000L + d.getNano() / 1_000;
  }
}

package dev.ratelimit;

import java.time.Duration;
import java.util.Objects;

/**
 * The answer to one check of one policy: an immutable value ({@code equals}, {@code hashCode},
 * {@code toString}).
 *
 * <p>{@code retryAfter} is zero when allowed; when denied it is the exact earliest moment, to the
 * microsecond, at which the same check would pass if nothing else happened. {@code remaining} is
 * what is left after this call's consumption (none when denied or when only inspecting), floored to
 * a whole unit. {@code resetAfter} is the time until the key's state is back to fresh. {@code delay}
 * is zero except for {@link Algorithm#LEAKY_BUCKET}, where it is how long the caller waits before
 * acting so that admitted work leaves at a constant rate.
 *
 * <p>The three times are held in microseconds: {@link #retryAfter()}, {@link #resetAfter()} and
 * {@link #delay()} build a {@link Duration} when called, and {@link #retryAfterMicros()},
 * {@link #resetAfterMicros()} and {@link #delayMicros()} answer without allocating, for hot paths
 * (headers, metrics).
 *
 * <p>A decision made by {@link FailureMode#FAIL_OPEN} or {@link FailureMode#FAIL_CLOSED} while the
 * backend failed has {@code remaining = -1} ({@link #isDegraded()}): nothing was counted, and
 * callers should not invent limit headers from it. A {@link FailureMode#LOCAL_FALLBACK} decision is
 * a real local one and not degraded. A shadow policy's denial is returned allowed (see {@link
 * RateLimiter.Builder#shadowPolicies}).
 */
public final class Decision {
  private final Policy policy;
  private final boolean allowed;
  private final long remaining;
  private final long retryAfterMicros;
  private final long resetAfterMicros;
  private final long delayMicros;

  /**
   * A decision; each {@link Duration} is kept in whole microseconds, a fraction rounded up (a wait
   * is never shortened), a negative one as zero.
   *
   * @param policy the policy that was checked
   * @param allowed whether the check passed (and consumed)
   * @param remaining units left after this call, or -1 when the backend could not answer
   * @param retryAfter zero when allowed, else the exact wait until the same check passes
   * @param resetAfter the wait until the key's state is back to fresh
   * @param delay the wait before acting on an admitted leaky-bucket check, else zero
   */
  public Decision(Policy policy, boolean allowed, long remaining, Duration retryAfter, Duration resetAfter,
      Duration delay) {
    this(policy, allowed, remaining, micros(Objects.requireNonNull(retryAfter, "retryAfter")),
        micros(Objects.requireNonNull(resetAfter, "resetAfter")), micros(Objects.requireNonNull(delay, "delay")));
  }

  private Decision(Policy policy, boolean allowed, long remaining, long retryAfterMicros, long resetAfterMicros,
      long delayMicros) {
    this.policy = Objects.requireNonNull(policy, "policy");
    this.allowed = allowed;
    this.remaining = remaining;
    this.retryAfterMicros = Math.max(0, retryAfterMicros);
    this.resetAfterMicros = Math.max(0, resetAfterMicros);
    this.delayMicros = Math.max(0, delayMicros);
  }

  /** An allowed decision; times in microseconds (zero when not positive). */
  public static Decision allowed(Policy policy, long remaining, long resetAfterMicros, long delayMicros) {
    return new Decision(policy, true, remaining, 0, resetAfterMicros, delayMicros);
  }

  /** A denied decision; times in microseconds (zero when not positive). */
  public static Decision denied(Policy policy, long remaining, long retryAfterMicros, long resetAfterMicros) {
    return new Decision(policy, false, remaining, retryAfterMicros, resetAfterMicros, 0);
  }

  /** The policy that was checked. */
  public Policy policy() {
    return policy;
  }

  /** Whether the check passed (and consumed). */
  public boolean allowed() {
    return allowed;
  }

  /** Units left after this call, floored; -1 when the backend could not answer ({@link #isDegraded()}). */
  public long remaining() {
    return remaining;
  }

  /** Zero when allowed, else the exact wait until the same check passes. */
  public Duration retryAfter() {
    return duration(retryAfterMicros);
  }

  /** The wait until the key's state is back to fresh. */
  public Duration resetAfter() {
    return duration(resetAfterMicros);
  }

  /** The wait before acting on an admitted leaky-bucket check, else zero. */
  public Duration delay() {
    return duration(delayMicros);
  }

  /** {@link #retryAfter()} in microseconds, without allocating. */
  public long retryAfterMicros() {
    return retryAfterMicros;
  }

  /** {@link #resetAfter()} in microseconds, without allocating. */
  public long resetAfterMicros() {
    return resetAfterMicros;
  }

  /** {@link #delay()} in microseconds, without allocating. */
  public long delayMicros() {
    return delayMicros;
  }

  /** The policy's limit (units per window). */
  public long limit() {
    return policy.limit();
  }

  /** Whether this decision was made by the failure mode because the backend could not answer. */
  public boolean isDegraded() {
    return remaining < 0;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Decision d && allowed == d.allowed && remaining == d.remaining
        && retryAfterMicros == d.retryAfterMicros && resetAfterMicros == d.resetAfterMicros
        && delayMicros == d.delayMicros && policy.equals(d.policy);
  }

  @Override
  public int hashCode() {
    int h = policy.hashCode();
    h = 31 * h + Boolean.hashCode(allowed);
    h = 31 * h + Long.hashCode(remaining);
    h = 31 * h + Long.hashCode(retryAfterMicros);
    h = 31 * h + Long.hashCode(resetAfterMicros);
    return 31 * h + Long.hashCode(delayMicros);
  }

  @Override
  public String toString() {
    return "Decision[policy=" + policy + ", allowed=" + allowed + ", remaining=" + remaining
        + ", retryAfter=" + retryAfter() + ", resetAfter=" + resetAfter() + ", delay=" + delay() + "]";
  }

  private static Duration duration(long micros) {
    if (micros == 0) {
      return Duration.ZERO;
    }
    return micros < Long.MAX_VALUE / 1_000 ? Duration.ofNanos(micros * 1_000)
        : Duration.ofSeconds(micros / 1_000_000, (micros % 1_000_000) * 1_000);
  }

  /** Whole microseconds of {@code d}, a fraction rounded up, saturated. */
  private static long micros(Duration d) {
    if (d.isNegative() || d.isZero()) {
      return 0;
    }
    long seconds = d.getSeconds();
    if (seconds >= Long.MAX_VALUE / 1_000_000 - 1) {
      return Long.MAX_VALUE;
    }
    return seconds * 1_000_000 + (d.getNano() + 999) / 1_000;
  }
}

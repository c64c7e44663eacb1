package dev.ratelimit;

import java.time.Duration;
import java.util.Objects;

/**
 * The answer to one check of one policy.
 *
 * <p>{@code retryAfter} is zero when allowed; when denied it is the exact earliest moment, to the
 * microsecond, at which the same check would pass if nothing else happened. {@code remaining} is
 * what is left after this call's consumption (none when denied or when only inspecting), floored to
 * a whole unit. {@code resetAfter} is the time until the key's state is back to fresh. {@code delay}
 * is zero except for {@link Algorithm#LEAKY_BUCKET}, where it is how long the caller waits before
 * acting so that admitted work leaves at a constant rate.
 *
 * <p>A decision made by {@link FailureMode#FAIL_OPEN} or {@link FailureMode#FAIL_CLOSED} while the
 * backend failed has {@code remaining = -1} ({@link #isDegraded()}): nothing was counted, and
 * callers should not invent limit headers from it. A {@link FailureMode#LOCAL_FALLBACK} decision is
 * a real local one and not degraded. A shadow policy's denial is returned allowed (see {@link
 * RateLimiter.Builder#shadowPolicies}).
 *
 * @param policy the policy that was checked
 * @param allowed whether the check passed (and consumed)
 * @param remaining units left after this call, or -1 when the backend could not answer
 * @param retryAfter zero when allowed, else the exact wait until the same check passes
 * @param resetAfter the wait until the key's state is back to fresh
 * @param delay the wait before acting on an admitted leaky-bucket check, else zero
 */
public record Decision(Policy policy, boolean allowed, long remaining,
    Duration retryAfter, Duration resetAfter, Duration delay) {

  /** Checks the components are present. */
  public Decision {
    Objects.requireNonNull(policy, "policy");
    Objects.requireNonNull(retryAfter, "retryAfter");
    Objects.requireNonNull(resetAfter, "resetAfter");
    Objects.requireNonNull(delay, "delay");
  }

  /** The policy's limit (units per window). */
  public long limit() {
    return policy.limit();
  }

  /** Whether this decision was made by the failure mode because the backend could not answer. */
  public boolean isDegraded() {
    return remaining < 0;
  }

  /** An allowed decision; durations in microseconds. */
  public static Decision allowed(Policy policy, long remaining, long resetAfterMicros, long delayMicros) {
    return new Decision(policy, true, remaining, Duration.ZERO, micros(resetAfterMicros), micros(delayMicros));
  }

  /** A denied decision; durations in microseconds (one Duration for both when they are equal, as FIXED_WINDOW's are). */
  public static Decision denied(Policy policy, long remaining, long retryAfterMicros, long resetAfterMicros) {
    Duration retryAfter = micros(retryAfterMicros);
    Duration resetAfter = retryAfterMicros == resetAfterMicros ? retryAfter : micros(resetAfterMicros);
    return new Decision(policy, false, remaining, retryAfter, resetAfter, Duration.ZERO);
  }

  /** A duration of {@code micros} µs, zero when not positive: one division by a constant on the hot path. */
  private static Duration micros(long micros) {
    if (micros <= 0) {
      return Duration.ZERO;
    }
    return micros < Long.MAX_VALUE / 1_000 ? Duration.ofNanos(micros * 1_000)
        : Duration.ofSeconds(micros / 1_000_000, (micros % 1_000_000) * 1_000);
  }
}

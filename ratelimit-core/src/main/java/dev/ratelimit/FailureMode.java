package dev.ratelimit;

/**
 * What the limiter decides when its backend fails: it throws, fails the stage, does not answer
 * within the {@link RateLimiter.Builder#timeout(java.time.Duration) timeout}, or is skipped by the
 * open {@link RateLimiter.Builder#circuitBreaker circuit breaker}. Nothing is counted in the backend
 * by such a decision (a timed-out call may still complete there).
 */
public enum FailureMode {
  /**
   * Allow the request: {@code allowed}, {@code remaining = -1}, all durations zero; the decision
   * is {@link Decision#isDegraded() degraded}, and no limit headers are derived from it.
   */
  FAIL_OPEN,
  /**
   * Deny the request with {@code retryAfter} (and {@code resetAfter}) = {@link
   * RateLimiter.Builder#failClosedRetryAfter(java.time.Duration) failClosedRetryAfter}, default
   * 1 s, and {@code remaining = -1}: {@link Decision#isDegraded() degraded}.
   */
  FAIL_CLOSED,
  /**
   * Decide with a local in-memory backend for the duration of the outage, each policy's limit and
   * burst scaled by {@link RateLimiter.Builder#localFallbackShare(double) localFallbackShare}.
   * These are real local decisions, exact for this instance: not degraded.
   */
  LOCAL_FALLBACK
}

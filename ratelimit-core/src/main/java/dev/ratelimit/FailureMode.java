package dev.ratelimit;

/** What the limiter decides when its backend fails (unreachable, timed out, erroring). */
public enum FailureMode {
  /** Allow the request; nothing is counted. The decision is {@link Decision#isDegraded() degraded}. */
  FAIL_OPEN,
  /** Deny the request with a short {@code retryAfter}; nothing is counted. */
  FAIL_CLOSED,
  /** Decide with a local in-memory backend for the duration of the outage. */
  LOCAL_FALLBACK
}

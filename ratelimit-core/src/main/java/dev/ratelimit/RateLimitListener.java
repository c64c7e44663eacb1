package dev.ratelimit;

/**
 * Observes a limiter: every decision's outcome, backend calls and errors, circuit changes. For
 * metrics (the Spring Boot starter binds it to Micrometer) and logs. Called on the checking
 * thread: implementations must be fast, thread-safe and must not throw.
 *
 * <p>The key is never passed: metrics stay of bounded cardinality (policy names only).
 */
public interface RateLimitListener {

  /** How a decision was made. */
  enum Outcome {
    /** The backend allowed. */
    ALLOWED,
    /** The backend denied. */
    DENIED,
    /** The near-cache denied locally, exactly as the backend would have. */
    DENIED_BY_NEAR_CACHE,
    /** The backend failed and the failure mode allowed ({@link FailureMode#FAIL_OPEN}). */
    FAILURE_ALLOWED,
    /** The backend failed and the failure mode denied ({@link FailureMode#FAIL_CLOSED}). */
    FAILURE_DENIED,
    /** The backend failed and the local fallback allowed ({@link FailureMode#LOCAL_FALLBACK}). */
    FALLBACK_ALLOWED,
    /** The backend failed and the local fallback denied. */
    FALLBACK_DENIED,
    /** A shadow-mode policy would have denied; the call was allowed. */
    SHADOW_DENIED
  }

  /** The circuit breaker's states. */
  enum CircuitState {
    /** Calls go to the backend. */
    CLOSED,
    /** The backend is skipped until the next probe; the failure mode decides. */
    OPEN,
    /** One probe call tests whether the backend is back. */
    HALF_OPEN
  }

  /** A listener that does nothing. */
  RateLimitListener NONE = new RateLimitListener() {};

  /** One policy's decision and how it was made. */
  default void onDecision(Policy policy, Outcome outcome) {}

  /** One backend call that completed (successfully or not) after {@code nanos}. */
  default void onBackendCall(long nanos, boolean success) {}

  /** A backend error (already handled by the failure mode). */
  default void onBackendError(Throwable error) {}

  /** The circuit breaker moved from one state to another. */
  default void onCircuitStateChange(CircuitState from, CircuitState to) {}
}

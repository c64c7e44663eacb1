package dev.ratelimit.annotation;

import dev.ratelimit.Decision;
import dev.ratelimit.MultiDecision;
import java.util.Objects;

/**
 * Thrown by a {@link RateLimited} method whose limit is reached. Carries the decisions; has no
 * stack trace (it is thrown on a hot path and says all it needs in its message).
 */
public class RateLimitExceededException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final transient MultiDecision decision;

  /** An exception for a denied {@code decision}. */
  public RateLimitExceededException(MultiDecision decision) {
    super(null, null, false, false);
    this.decision = Objects.requireNonNull(decision, "decision");
  }

  /**
   * Names the limiting policy and when to retry; built when asked, as most denials are answered
   * without ever reading it.
   */
  @Override
  public String getMessage() {
    if (decision == null) { // deserialized: the decisions are not serialized
      return null;
    }
    Decision limiting = decision.limiting();
    return "rate limit of policy '" + limiting.policy().name() + "' exceeded; retry after "
        + limiting.retryAfter();
  }

  /** Every policy's decision. */
  public MultiDecision decisions() {
    return decision;
  }

  /** The decision that limits most (the longest {@code retryAfter}). */
  public Decision decision() {
    return decision.limiting();
  }
}

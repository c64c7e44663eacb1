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
    super(message(Objects.requireNonNull(decision, "decision")), null, false, false);
    this.decision = decision;
  }

  /** Every policy's decision. */
  public MultiDecision decisions() {
    return decision;
  }

  /** The decision that limits most (the longest {@code retryAfter}). */
  public Decision decision() {
    return decision.limiting();
  }

  private static String message(MultiDecision decision) {
    Decision limiting = decision.limiting();
    return "rate limit of policy '" + limiting.policy().name() + "' exceeded; retry after "
        + limiting.retryAfter();
  }
}

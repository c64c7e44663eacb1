package dev.ratelimit.spi;

import dev.ratelimit.MultiDecision;
import java.util.List;
import java.util.Objects;

/**
 * A multi-policy decision and, when it is a denial, every policy's state (see {@link Evaluation}).
 *
 * @param decision the decision
 * @param states one state per policy in order (an element may be null), or null when not provided
 * @param nowMicros the time the backend decided at
 */
public record MultiEvaluation(MultiDecision decision, List<long[]> states, long nowMicros) {
  /** Checks the decision is present. */
  public MultiEvaluation {
    Objects.requireNonNull(decision, "decision");
  }
}

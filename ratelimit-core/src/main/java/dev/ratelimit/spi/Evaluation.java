package dev.ratelimit.spi;

import dev.ratelimit.Decision;
import java.util.Objects;

/**
 * A decision and, when it is a denial, the state it was made on: the numbers a near-cache
 * evaluates with {@link dev.ratelimit.memory.StateSnapshots} to answer the same key locally.
 *
 * @param decision the decision
 * @param state the key's state in the algorithm's snapshot layout, or null when not provided
 * @param nowMicros the time the backend decided at: the {@code now} it was given, or its own clock's
 */
public record Evaluation(Decision decision, long[] state, long nowMicros) {
  /** Checks the decision is present. */
  public Evaluation {
    Objects.requireNonNull(decision, "decision");
  }
}

package dev.ratelimit.spi;

import dev.ratelimit.MultiDecision;
import java.util.List;
import java.util.Objects;

/**
 * A backend's answer to {@link Command.Reserve}: the decisions, as a check of the estimate would
 * answer them, and when allowed one {@link Mark} per policy, in order.
 *
 * @param decision one decision per policy, all allowed or the reservation refused (nothing taken)
 * @param marks one mark per policy when allowed; empty when refused
 * @param nowMicros the time the backend decided at
 */
public record Reserved(MultiDecision decision, List<Mark> marks, long nowMicros) {
  /** Checks that an allowed answer carries one mark per policy. */
  public Reserved {
    Objects.requireNonNull(decision, "decision");
    marks = List.copyOf(marks);
    if (decision.allowed() && marks.size() != decision.decisions().size()) {
      throw new IllegalArgumentException("an allowed reservation needs one mark per policy: "
          + marks.size() + " marks for " + decision.decisions().size() + " policies");
    }
  }
}

package dev.ratelimit.spring;

import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimitListener.Outcome;
import java.util.Arrays;
import java.util.Locale;

/**
 * How the decisions of one observed check were made: the limiter reports each policy's outcome to
 * its listener on the checking thread, inside the call, and the observation reads them after it.
 */
final class CheckOutcomes {
  private static final ThreadLocal<CheckOutcomes> CURRENT = new ThreadLocal<>();
  /** Each outcome's key value: its name in lower case, as the metrics' outcome tag. */
  private static final String[] VALUES = Arrays.stream(Outcome.values())
      .map(o -> o.name().toLowerCase(Locale.ROOT)).toArray(String[]::new);

  /** Records each outcome into the check open on the reporting thread, if any. */
  static final RateLimitListener LISTENER = new RateLimitListener() {
    @Override
    public void onDecision(Policy policy, Outcome outcome) {
      CheckOutcomes open = CURRENT.get();
      if (open != null) {
        open.add(policy, outcome);
      }
    }

    @Override
    public String toString() {
      return "RateLimitObservation.outcomes()";
    }
  };

  private final CheckOutcomes outer;
  private Policy[] policies = new Policy[2];
  private Outcome[] outcomes = new Outcome[2];
  private int size;

  private CheckOutcomes(CheckOutcomes outer) {
    this.outer = outer;
  }

  /** Starts recording the outcomes reported on this thread; {@link #close()} ends it. */
  static CheckOutcomes open() {
    CheckOutcomes outcomes = new CheckOutcomes(CURRENT.get());
    CURRENT.set(outcomes);
    return outcomes;
  }

  /** Stops recording; what was recorded stays readable. */
  void close() {
    if (outer == null) {
      CURRENT.remove();
    } else {
      CURRENT.set(outer);
    }
  }

  private void add(Policy policy, Outcome outcome) {
    if (size == policies.length) {
      policies = Arrays.copyOf(policies, size * 2);
      outcomes = Arrays.copyOf(outcomes, size * 2);
    }
    policies[size] = policy;
    outcomes[size] = outcome;
    size++;
  }

  /**
   * The outcome reported last for {@code decision}'s policy, as a key value; when none was (a
   * listener not given to the limiter, an answer on another thread), the one {@code decision}
   * shows.
   */
  String of(Decision decision) {
    Policy policy = decision.policy();
    for (int i = size - 1; i >= 0; i--) {
      if (policies[i] == policy || policies[i].equals(policy)) {
        return VALUES[outcomes[i].ordinal()];
      }
    }
    Outcome shown = decision.isDegraded()
        ? (decision.allowed() ? Outcome.FAILURE_ALLOWED : Outcome.FAILURE_DENIED)
        : (decision.allowed() ? Outcome.ALLOWED : Outcome.DENIED);
    return VALUES[shown.ordinal()];
  }
}

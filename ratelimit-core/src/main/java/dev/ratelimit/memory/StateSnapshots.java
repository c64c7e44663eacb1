package dev.ratelimit.memory;

import dev.ratelimit.Decision;
import dev.ratelimit.Policy;

/**
 * Evaluates a backend's state snapshot with the in-memory algorithms, read-only: the near-cache's
 * way to answer a hot denied key locally with exactly the decision the backend would give (it
 * {@link #restore restores} a snapshot once and evaluates it on every answer). One implementation
 * of each algorithm in Java, used twice.
 *
 * <p>Snapshot layouts, as the Redis scripts return them on a denial: FIXED_WINDOW
 * {@code [windowStart, count]}; SLIDING_WINDOW {@code [windowStart, previous, current]};
 * TOKEN_BUCKET {@code [credits, last]}; GCRA and LEAKY_BUCKET {@code [tatMicros, tatFraction]};
 * SLIDING_LOG the timestamps of the units in the window, oldest first.
 */
public final class StateSnapshots {
  private StateSnapshots() {}

  /**
   * The decision a check of {@code cost} at {@code nowMicros} gets from {@code snapshot}, consuming
   * nothing.
   */
  public static Decision evaluate(Policy policy, long[] snapshot, long nowMicros, long cost) {
    return restore(policy, snapshot).evaluate(policy, nowMicros, cost);
  }

  /**
   * {@code snapshot} of {@code policy}'s algorithm restored once, to be {@link Restored#evaluate
   * evaluated} any number of times: what a near-cache keeps for a hot denied key, rather than
   * restoring the snapshot on every answer.
   *
   * @throws RuntimeException when the snapshot is not one the algorithm reads
   */
  public static Restored restore(Policy policy, long[] snapshot) {
    State state = State.fresh(policy);
    state.restore(snapshot);
    return new Restored(state);
  }

  /**
   * A restored snapshot. Evaluating it changes nothing (nothing is consumed), so any number of
   * threads may evaluate one at once.
   */
  public static final class Restored {
    private final State state;

    private Restored(State state) {
      this.state = state;
    }

    /** {@link StateSnapshots#evaluate} of this snapshot, for the policy it was restored for. */
    public Decision evaluate(Policy policy, long nowMicros, long cost) {
      return State.check(state, policy, nowMicros, cost, false);
    }
  }
}

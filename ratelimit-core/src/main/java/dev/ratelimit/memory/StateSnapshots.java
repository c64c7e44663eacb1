package dev.ratelimit.memory;

import dev.ratelimit.Decision;
import dev.ratelimit.Policy;

/**
 * Evaluates a backend's state snapshot with the in-memory algorithms, read-only: the near-cache's
 * way to answer a hot denied key locally with exactly the decision the backend would give. One
 * implementation of each algorithm in Java, used twice.
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
    State state = State.fresh(policy);
    state.restore(snapshot);
    return State.check(state, policy, nowMicros, cost, false);
  }
}

package dev.ratelimit;

import java.util.List;
import java.util.Objects;

/**
 * The answer to {@link RateLimiter#checkAll}: allowed only if every policy allowed, in which case
 * every policy consumed; otherwise nothing was consumed anywhere (but for a check across keys in a
 * Redis Cluster, which is all or nothing per hash slot: see {@link RateLimiter#checkAll(List, long)}).
 * When denied, each decision says whether its policy alone would have passed, with what remains now.
 *
 * @param allowed whether every policy allowed (and all consumed)
 * @param decisions one decision per policy, in the order the policies were given
 */
public record MultiDecision(boolean allowed, List<Decision> decisions) {

  /** Copies the list; it must not be empty. */
  public MultiDecision {
    decisions = List.copyOf(Objects.requireNonNull(decisions, "decisions"));
    Require.argument(!decisions.isEmpty(), "decisions must not be empty");
  }

  /**
   * The decision that limits most: among the denying policies, the one with the longest
   * {@code retryAfter}; when all allowed, the one with the least {@code remaining}.
   */
  public Decision limiting() {
    // loops, not streams, and microseconds, not Durations: a front door asks this on every denial
    Decision most = null;
    if (!allowed) {
      for (Decision d : decisions) {
        if (!d.allowed() && (most == null || limitsMore(d, most))) {
          most = d;
        }
      }
      if (most != null) {
        return most;
      }
      for (Decision d : decisions) {
        if (most == null || limitsMore(d, most)) {
          most = d;
        }
      }
      return most;
    }
    for (Decision d : decisions) {
      if (most == null || d.remaining() < most.remaining()) {
        most = d;
      }
    }
    return most;
  }

  /** A longer wait limits more; at equal waits, less remaining does; the first of equals stays. */
  private static boolean limitsMore(Decision d, Decision than) {
    long a = d.retryAfterMicros();
    long b = than.retryAfterMicros();
    return a != b ? a > b : d.remaining() < than.remaining();
  }
}

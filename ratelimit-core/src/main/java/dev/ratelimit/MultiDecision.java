package dev.ratelimit;

import java.util.Comparator;
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

  private static final Comparator<Decision> MOST_LIMITING =
      Comparator.comparing(Decision::retryAfter).thenComparing(d -> -d.remaining());

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
    if (!allowed) {
      return decisions.stream().filter(d -> !d.allowed()).max(MOST_LIMITING)
          .orElseGet(() -> decisions.stream().max(MOST_LIMITING).orElseThrow());
    }
    return decisions.stream().min(Comparator.comparingLong(Decision::remaining)).orElseThrow();
  }
}

package dev.ratelimit;

import java.util.List;

/**
 * One (key, policy) pair of a {@link RateLimiter#checkAll(List, long) cross-key check}: the key
 * checked against the policy, each pair with its own state, as {@code check(key, policy)} would
 * keep it. Two pairs are the same pair when their keys are equal and their policies have the same
 * name and algorithm (the state's identity; see {@link dev.ratelimit.spi.Backend}).
 *
 * <pre>{@code
 * MultiDecision d = limiter.checkAll(List.of(
 *     KeyedPolicy.of("tenant:acme", perTenant),
 *     KeyedPolicy.of("user:42", perUser)), 1);
 * }</pre>
 *
 * @param key the key, not null or empty
 * @param policy the policy the key is checked against, not null
 */
public record KeyedPolicy(String key, Policy policy) {

  /**
   * Checks the pair.
   *
   * @throws IllegalArgumentException for a null or empty key or a null policy
   */
  public KeyedPolicy {
    Require.argument(key != null && !key.isEmpty(), "key must not be null or empty, was %s",
        key == null ? "null" : "''");
    Require.argument(policy != null, "policy must not be null (key '%s')", CheckArguments.printable(key));
  }

  /** The pair ({@code key}, {@code policy}). */
  public static KeyedPolicy of(String key, Policy policy) {
    return new KeyedPolicy(key, policy);
  }

  /** The key every pair has, or null when the pairs have different keys. */
  static String commonKey(List<KeyedPolicy> checks) {
    String key = checks.get(0).key();
    for (int i = 1; i < checks.size(); i++) {
      if (!checks.get(i).key().equals(key)) {
        return null;
      }
    }
    return key;
  }

  /** The pairs' policies, in order. */
  static List<Policy> policies(List<KeyedPolicy> checks) {
    Policy[] policies = new Policy[checks.size()];
    for (int i = 0; i < policies.length; i++) {
      policies[i] = checks.get(i).policy();
    }
    return List.of(policies);
  }

  /**
   * Refuses a null or empty list, a null pair, and the same pair twice, naming it; checks nothing
   * about the cost (the limiter does, against each policy).
   */
  static void validate(List<KeyedPolicy> checks) {
    Require.argument(checks != null && !checks.isEmpty(), "checks must not be empty, was %s", checks);
    for (int i = 0; i < checks.size(); i++) {
      KeyedPolicy check = checks.get(i);
      Require.argument(check != null, "checks must not contain null, was null at %s", i);
      for (int j = 0; j < i; j++) {
        if (checks.get(j).sameStateAs(check)) {
          throw new IllegalArgumentException("checks must be distinct pairs (key, policy name and algorithm): "
              + check.describe() + " appears twice, at " + j + " and " + i);
        }
      }
    }
  }

  /** Whether {@code other} names the same state: an equal key and a policy of the same name and algorithm. */
  boolean sameStateAs(KeyedPolicy other) {
    return key.equals(other.key) && policy.name().equals(other.policy.name())
        && policy.algorithm() == other.policy.algorithm();
  }

  /** The pair for a message: the key (printable, at most 64 characters) and the policy's name and algorithm. */
  String describe() {
    return "('" + CheckArguments.printable(key) + "', '" + CheckArguments.printable(policy.name()) + "' ("
        + policy.algorithm() + "))";
  }
}

package dev.ratelimit;

import java.util.List;

/**
 * The limiter's argument checks, made before any state is touched: each refusal an {@link
 * IllegalArgumentException} naming the value and the fix.
 */
final class CheckArguments {
  private CheckArguments() {}

  static void validate(String key, Policy policy, long cost) {
    // a non-zero hash (cached in the String) proves the key non-empty without reading its characters
    if (key == null || (key.hashCode() == 0 && key.isEmpty())) {
      throw new IllegalArgumentException("key must not be null or empty, was "
          + (key == null ? "null" : "''"));
    }
    if (policy == null) {
      throw new IllegalArgumentException("policy must not be null");
    }
    if (cost < 1) {
      throw new IllegalArgumentException("cost must be at least 1, was " + cost);
    }
    if (cost > policy.capacity()) {
      throw new IllegalArgumentException("cost " + cost + " is greater than the capacity "
          + policy.capacity() + " of policy '" + policy.name() + "' (" + (policy.algorithm().usesBurst()
          ? "its burst" : "its limit") + "): it could never pass; raise the "
          + (policy.algorithm().usesBurst() ? "burst" : "limit") + " or split the cost");
    }
  }

  static void validateAll(String key, List<Policy> policies, long cost) {
    Require.argument(policies != null && !policies.isEmpty(), "policies must not be empty, was %s", policies);
    for (int i = 0; i < policies.size(); i++) {
      Policy policy = policies.get(i);
      validate(key, policy, cost);
      for (int j = 0; j < i; j++) {
        Policy other = policies.get(j);
        if (other.name().equals(policy.name()) && other.algorithm() == policy.algorithm()) {
          throw new IllegalArgumentException("policies must be distinct by name and algorithm: '"
              + policy.name() + "' (" + policy.algorithm() + ") appears twice");
        }
      }
    }
  }

  static void validateAcross(List<KeyedPolicy> checks, long cost) {
    KeyedPolicy.validate(checks);
    for (KeyedPolicy check : checks) {
      validate(check.key(), check.policy(), cost);
    }
  }

  /** At most 64 characters of {@code s}, control characters replaced: fit for a log line. */
  static String printable(String s) {
    StringBuilder sb = new StringBuilder(Math.min(s.length(), 64));
    for (int i = 0; i < s.length() && i < 64; i++) {
      char c = s.charAt(i);
      sb.append(Character.isISOControl(c) || Character.isSurrogate(c) ? '?' : c);
    }
    return s.length() > 64 ? sb.append("...").toString() : sb.toString();
  }
}

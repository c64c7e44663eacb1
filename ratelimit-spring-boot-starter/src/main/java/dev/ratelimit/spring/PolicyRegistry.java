package dev.ratelimit.spring;

import dev.ratelimit.Policy;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/** The named policies of {@code ratelimit.policies}, validated when the application starts. */
public final class PolicyRegistry {
  private final Map<String, Policy> policies;

  /** Policies as given; names must match their map keys. */
  public PolicyRegistry(Map<String, Policy> policies) {
    this.policies = Collections.unmodifiableMap(new LinkedHashMap<>(policies));
  }

  /**
   * Builds every policy of {@code properties}; a bad one fails with an
   * {@link IllegalArgumentException} naming its property, e.g. {@code ratelimit.policies.api.window}.
   */
  public static PolicyRegistry from(RateLimitProperties properties) {
    Map<String, Policy> built = new LinkedHashMap<>();
    properties.getPolicies().forEach((name, p) -> built.put(name, build(name, p)));
    return new PolicyRegistry(built);
  }

  private static Policy build(String name, RateLimitProperties.PolicyProperties p) {
    String property = "ratelimit.policies." + name;
    if (p.getLimit() == null) {
      throw new IllegalArgumentException(property + ".limit is required (units per window, e.g. 100)");
    }
    if (p.getWindow() == null) {
      throw new IllegalArgumentException(property + ".window is required (e.g. 1m or 500ms)");
    }
    try {
      Duration window = Policy.parseWindow(p.getWindow());
      Policy policy = Policy.of(p.getLimit(), window, p.getAlgorithm()).withName(name);
      return p.getBurst() == null ? policy : policy.withBurst(p.getBurst());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("invalid policy " + property + ": " + e.getMessage(), e);
    }
  }

  /** The policy called {@code name}, if configured. */
  public Optional<Policy> find(String name) {
    return Optional.ofNullable(policies.get(name));
  }

  /**
   * The policy called {@code name}.
   *
   * @throws IllegalArgumentException naming {@code usedBy} and the configured names when there is none
   */
  public Policy get(String name, String usedBy) {
    Policy policy = policies.get(name);
    if (policy == null) {
      throw new IllegalArgumentException("unknown policy '" + name + "' used by " + usedBy
          + "; configured policies (ratelimit.policies.*): " + policies.keySet());
    }
    return policy;
  }

  /** Every policy by name. */
  public Map<String, Policy> all() {
    return policies;
  }
}

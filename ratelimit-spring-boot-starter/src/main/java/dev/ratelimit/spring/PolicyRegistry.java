package dev.ratelimit.spring;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Policy;
import dev.ratelimit.http.PolicyNames;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The named policies of {@code ratelimit.policies}, validated when the application starts and
 * updatable while it runs ({@link #update}). Thread-safe: readers see one immutable snapshot,
 * updates replace it.
 *
 * <p>A policy's name is its state's identity, so an update changes the numbers and keeps every
 * key's state. Updates are local to this instance. Names are printable ASCII: the limit headers
 * carry them ({@link PolicyNames}).
 */
public final class PolicyRegistry {
  private volatile Map<String, Policy> policies;
  private final List<Consumer<PolicyRegistry>> listeners = new CopyOnWriteArrayList<>();
  private final List<java.util.function.BiConsumer<String, Policy>> checks = new CopyOnWriteArrayList<>();
  private final Object updates = new Object();

  /** Policies as given; each one is stored under its map key as its name. */
  public PolicyRegistry(Map<String, Policy> policies) {
    Map<String, Policy> copy = new LinkedHashMap<>();
    policies.forEach((name, policy) -> copy.put(name, named(name, policy)));
    this.policies = Collections.unmodifiableMap(copy);
  }

  /**
   * Builds every policy of {@code properties}; a bad one fails with an
   * {@link IllegalArgumentException} naming its property, e.g. {@code ratelimit.policies.api.window}.
   */
  public static PolicyRegistry from(RateLimitProperties properties) {
    Map<String, Policy> built = new LinkedHashMap<>();
    properties.getPolicies().forEach((name, p) -> {
      String property = "ratelimit.policies." + name;
      try {
        built.put(name, build(name, p.getLimit(), p.getWindow(), p.getAlgorithm(), p.getBurst(), property + "."));
      } catch (IllegalArgumentException e) {
        throw e.getMessage().startsWith(property) ? e
            : new IllegalArgumentException("invalid policy " + property + ": " + e.getMessage(), e);
      }
    });
    return new PolicyRegistry(built);
  }

  /**
   * A policy called {@code name} from its parts as configuration gives them.
   *
   * @param fieldPrefix what names the fields in messages, e.g. {@code "ratelimit.policies.api."} or {@code ""}
   * @throws IllegalArgumentException naming the field at fault
   */
  static Policy build(String name, Long limit, Duration window, Algorithm algorithm, Long burst, String fieldPrefix) {
    if (limit == null) {
      throw new IllegalArgumentException(fieldPrefix + "limit is required (units per window, e.g. 100)");
    }
    if (window == null) {
      throw new IllegalArgumentException(fieldPrefix + "window is required (e.g. 1m or 500ms)");
    }
    if (limit < 1) {
      throw new IllegalArgumentException(fieldPrefix + "limit must be at least 1, was " + limit);
    }
    if (burst != null && burst < 1) {
      throw new IllegalArgumentException(fieldPrefix + "burst must be at least 1, was " + burst);
    }
    Policy policy = Policy.of(limit, window, algorithm == null ? Algorithm.GCRA : algorithm).withName(name);
    return burst == null ? policy : policy.withBurst(burst);
  }

  /** {@link #build(String, Long, Duration, Algorithm, Long, String)} with the window as text ({@link #parseWindow}). */
  static Policy build(String name, Long limit, String window, Algorithm algorithm, Long burst, String fieldPrefix) {
    if (limit == null || window == null || window.isBlank()) { // the message of the field missing
      return build(name, limit, (Duration) null, algorithm, burst, fieldPrefix);
    }
    Duration parsed;
    try {
      parsed = parseWindow(window.trim());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(fieldPrefix + "window: " + e.getMessage(), e);
    }
    return build(name, limit, parsed, algorithm, burst, fieldPrefix);
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

  /**
   * A window as {@code 1m} or {@code 500ms} ({@link Policy#parseWindow}), or as ISO-8601
   * ({@code PT1M}), the form the endpoint shows it in: what is read can be written back.
   */
  private static Duration parseWindow(String window) {
    if (!window.startsWith("P") && !window.startsWith("p")) {
      return Policy.parseWindow(window);
    }
    try {
      return Duration.parse(window);
    } catch (java.time.format.DateTimeParseException e) {
      throw new IllegalArgumentException("cannot parse window '" + window + "': expected e.g. \"1m\", \"500ms\""
          + " or ISO-8601 \"PT1M\"", e);
    }
  }

  /** Every policy by name: a snapshot, unchanged by later updates. */
  public Map<String, Policy> all() {
    return policies;
  }

  /**
   * Replaces the numbers of the configured policy {@code name}: {@code @RateLimited} methods that
   * name it and filter rules that use it check with {@code policy} from their next call on. Keys
   * keep their state (it lives under the policy's name and algorithm; a new algorithm starts
   * from fresh state). {@code policy} is stored under {@code name}; an explicit name of its own
   * must be {@code name}.
   *
   * @return the policy as stored
   * @throws IllegalArgumentException when no policy is called {@code name}, {@code policy} has
   *     an explicit other name, or a {@link #beforeUpdate check} refuses it
   */
  public Policy update(String name, Policy policy) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(policy, "policy");
    Policy stored = named(name, policy);
    synchronized (updates) {
      if (!policies.containsKey(name)) {
        throw new IllegalArgumentException("unknown policy '" + name + "'; configured policies "
            + "(ratelimit.policies.*): " + policies.keySet());
      }
      for (java.util.function.BiConsumer<String, Policy> check : checks) {
        check.accept(name, stored); // refuses before anything changes
      }
      Map<String, Policy> next = new LinkedHashMap<>(policies);
      next.put(name, stored);
      policies = Collections.unmodifiableMap(next);
      for (Consumer<PolicyRegistry> listener : listeners) {
        listener.accept(this); // in update order: a later update never overtakes an earlier one
      }
    }
    return stored;
  }

  /**
   * Runs {@code check} with the name and the new policy before every {@link #update}: one that
   * throws {@link IllegalArgumentException} refuses the update, and nothing changes.
   */
  public void beforeUpdate(java.util.function.BiConsumer<String, Policy> check) {
    checks.add(Objects.requireNonNull(check, "check"));
  }

  /**
   * Runs {@code listener} after every {@link #update}, on the updating thread, one update at a
   * time. A listener that throws fails that update's caller; the update itself stays.
   */
  public void onUpdate(Consumer<PolicyRegistry> listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
  }

  private static Policy named(String name, Policy policy) {
    PolicyNames.requireFitsHeader(name, "ratelimit.policies." + name);
    if (!policy.hasDerivedName() && !policy.name().equals(name)) {
      throw new IllegalArgumentException("policy named '" + policy.name() + "' cannot be stored as '"
          + name + "': a configured policy's name is its key");
    }
    return policy.name().equals(name) ? policy : policy.withName(name);
  }
}

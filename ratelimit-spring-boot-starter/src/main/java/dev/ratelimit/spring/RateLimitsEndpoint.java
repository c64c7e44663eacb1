package dev.ratelimit.spring;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * The {@code ratelimits} Actuator endpoint: the configured policies, one key's state, a reset and
 * a policy change. Read-only by default ({@link Access#READ_ONLY}): the reset and the change are
 * there only with {@code management.endpoint.ratelimits.access=unrestricted}.
 *
 * <ul>
 *   <li>{@code GET /actuator/ratelimits}: every configured policy;</li>
 *   <li>{@code GET /actuator/ratelimits/{policy}}: one policy;</li>
 *   <li>{@code GET /actuator/ratelimits/{policy}/{key}}: the key's state now, by
 *       {@link RateLimiter#inspect}, which consumes and writes nothing;</li>
 *   <li>{@code DELETE /actuator/ratelimits/{policy}/{key}}: resets the key under the policy;</li>
 *   <li>{@code POST /actuator/ratelimits/{policy}} with {@code {"limit":..,"window":..,
 *       "algorithm":..,"burst":..}}: new numbers for the policy ({@link PolicyRegistry#update}).</li>
 * </ul>
 * Keys are the limiter's keys: what {@code @RateLimited}'s key expression gave, and
 * {@code <rule>:<key>} for filter rules. A key may contain {@code /}: everything after the policy is
 * the key.
 */
@Endpoint(id = "ratelimits", defaultAccess = Access.READ_ONLY)
public class RateLimitsEndpoint {
  private final RateLimiter limiter;
  private final PolicyRegistry policies;

  /** An endpoint over {@code limiter} and the configured {@code policies}. */
  public RateLimitsEndpoint(RateLimiter limiter, PolicyRegistry policies) {
    this.limiter = limiter;
    this.policies = policies;
  }

  /** Every configured policy. */
  @ReadOperation
  public PoliciesDescriptor policies() {
    return new PoliciesDescriptor(policies.all().values().stream().map(PolicyDescriptor::of).toList());
  }

  /** One configured policy, or 404. */
  @ReadOperation
  public @Nullable PolicyDescriptor policy(@Selector String policy) {
    return policies.find(policy).map(PolicyDescriptor::of).orElse(null);
  }

  /** The state of {@code key} under {@code policy} now, consuming nothing; 404 for an unknown policy. */
  @ReadOperation
  public @Nullable KeyDescriptor key(@Selector String policy, @Selector(match = Selector.Match.ALL_REMAINING) String[] key) {
    Policy found = policies.find(policy).orElse(null);
    if (found == null) {
      return null;
    }
    String k = key(key);
    return KeyDescriptor.of(k, limiter.inspect(k, found));
  }

  /** Forgets {@code key}'s state under {@code policy} (this instance's backend; Redis for all). */
  @DeleteOperation
  public void reset(@Selector String policy, @Selector(match = Selector.Match.ALL_REMAINING) String[] key) {
    limiter.reset(key(key), known(policy));
  }

  /**
   * Gives the configured policy {@code policy} new numbers, on this instance. {@code limit} and
   * {@code window} are required; {@code algorithm} defaults to the policy's current one and
   * {@code burst} to the limit. Keys keep their state.
   */
  @WriteOperation
  public PolicyDescriptor update(@Selector String policy, @Nullable Long limit, @Nullable String window,
      @Nullable String algorithm, @Nullable Long burst) {
    Policy current = known(policy);
    try {
      Algorithm a = algorithm == null || algorithm.isBlank() ? current.algorithm() : algorithm(algorithm);
      return PolicyDescriptor.of(policies.update(policy, PolicyRegistry.build(policy, limit, window, a, burst, "")));
    } catch (IllegalArgumentException e) {
      throw new InvalidEndpointRequestException("invalid policy '" + policy + "': " + e.getMessage(), e.getMessage());
    }
  }

  private Policy known(String name) {
    return policies.find(name).orElseThrow(() -> new InvalidEndpointRequestException(
        "unknown policy '" + name + "'; configured policies: " + policies.all().keySet(),
        "unknown policy '" + name + "'"));
  }

  private static Algorithm algorithm(String text) {
    try {
      return Algorithm.valueOf(text.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("algorithm must be one of " + Arrays.toString(Algorithm.values())
          + ", was '" + text + "'", e);
    }
  }

  private static String key(String[] segments) {
    String key = String.join("/", segments);
    if (key.isEmpty()) {
      throw new InvalidEndpointRequestException("key is required", "key is required");
    }
    return key;
  }

  private static long ceilMillis(Duration d) {
    long micros = d.getSeconds() * 1_000_000L + d.getNano() / 1_000;
    return (micros + 999) / 1_000;
  }

  /**
   * The configured policies.
   *
   * @param policies each policy, in configuration order
   */
  public record PoliciesDescriptor(List<PolicyDescriptor> policies) {}

  /**
   * One policy.
   *
   * @param name its name
   * @param limit units per window
   * @param window the window, ISO-8601 ({@code PT1M})
   * @param windowMs the window in milliseconds
   * @param algorithm the algorithm
   * @param burst the capacity of the bucket algorithms (equal to the limit unless set)
   */
  public record PolicyDescriptor(String name, long limit, String window, long windowMs, Algorithm algorithm,
      long burst) {
    static PolicyDescriptor of(Policy p) {
      return new PolicyDescriptor(p.name(), p.limit(), p.window().toString(), p.window().toMillis(), p.algorithm(),
          p.burst());
    }
  }

  /**
   * One key's state under one policy, as a cost-1 check would see it now.
   *
   * @param policy the policy's name
   * @param key the key
   * @param allowed whether a cost-1 check would pass now
   * @param limit the policy's limit
   * @param remaining units available now, or -1 when the backend could not answer
   * @param retryAfterMs when not allowed, the wait until a cost-1 check passes, rounded up to ms
   * @param resetAfterMs the wait until the key's state is fresh again, rounded up to ms
   */
  public record KeyDescriptor(String policy, String key, boolean allowed, long limit, long remaining,
      long retryAfterMs, long resetAfterMs) {
    static KeyDescriptor of(String key, Decision d) {
      return new KeyDescriptor(d.policy().name(), key, d.allowed(), d.limit(), d.remaining(),
          ceilMillis(d.retryAfter()), ceilMillis(d.resetAfter()));
    }
  }
}

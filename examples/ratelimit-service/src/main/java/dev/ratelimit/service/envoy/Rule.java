package dev.ratelimit.service.envoy;

import dev.ratelimit.Policy;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import java.util.Set;

/**
 * One descriptor's {@code rate_limit} block.
 *
 * @param path the descriptor's place, as the reference service names it in its statistics
 *     ({@code domain.key_value.key}); the name of {@link #policy} and of its metrics
 * @param name the block's {@code name}, which another rule's {@code replaces} names; "" when none
 * @param replaces the names of the rules this one replaces when both match one request
 * @param policy what the limiter checks; null when unlimited or blocking (0 requests per unit)
 * @param requestsPerUnit {@code requests_per_unit}; 0 refuses every request
 * @param unit the {@code unit}, as answered in {@code current_limit}; UNKNOWN when only a
 *     {@code window} is given, or unlimited
 * @param unlimited {@code unlimited: true}: always OK, the backend is not asked
 * @param shadow {@code shadow_mode: true}: checked and counted, never refusing
 */
record Rule(String path, String name, Set<String> replaces, Policy policy, long requestsPerUnit,
    RateLimitResponse.RateLimit.Unit unit, boolean unlimited, boolean shadow) {

  /** Whether no request ever passes: {@code requests_per_unit: 0}. */
  boolean blocks() {
    return !unlimited && requestsPerUnit == 0;
  }

  /** The {@code current_limit} of an answer. */
  RateLimitResponse.RateLimit currentLimit() {
    return RateLimitResponse.RateLimit.newBuilder().setName(name)
        .setRequestsPerUnit((int) Math.min(requestsPerUnit, 0xFFFF_FFFFL)).setUnit(unit).build();
  }
}

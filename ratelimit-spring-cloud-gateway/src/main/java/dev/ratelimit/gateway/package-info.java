/**
 * Spring Cloud Gateway: {@link dev.ratelimit.gateway.PolicyRateLimiter}, the gateway's {@code
 * RateLimiter} backed by this limiter, auto-configured beside the starter.
 */
package dev.ratelimit.gateway;

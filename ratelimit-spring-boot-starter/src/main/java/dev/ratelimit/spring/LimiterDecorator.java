package dev.ratelimit.spring;

import dev.ratelimit.RateLimiter;

/**
 * Changes the limiter the starter builds, before any bean sees it: how optional features (the
 * Observation of each check) apply to it without the auto-configuration knowing their classes.
 */
interface LimiterDecorator {
  /** Adds to the limiter's settings before it is built (a listener, say). */
  default void configure(RateLimiter.Builder builder) {}

  /** The limiter to use instead of {@code limiter}, or {@code limiter}. */
  RateLimiter decorate(RateLimiter limiter);
}

package dev.ratelimit.spring;

import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import java.time.Duration;

/**
 * The starter's own Redisson client connects on first use (so that an application starts while
 * Redis is down), and that first connection can take longer than the limiter's timeout, in which
 * case the failure mode decides that check. Tests that count checks warm the connection first.
 */
final class RedisWarmUp {
  private RedisWarmUp() {}

  /** Checks a throwaway key until Redis answers; fails after about 10 s. */
  static void warmUp(RateLimiter limiter) throws InterruptedException {
    Policy probe = Policy.of(1_000_000, Duration.ofMinutes(1)).withName("warm-up");
    for (int i = 0; i < 100; i++) {
      if (!limiter.check("warm-up", probe).isDegraded()) {
        return;
      }
      Thread.sleep(100);
    }
    throw new AssertionError("Redis did not answer within 10 s");
  }
}

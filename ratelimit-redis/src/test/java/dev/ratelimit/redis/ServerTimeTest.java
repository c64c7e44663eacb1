package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.ManualClock;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * With server time, instances whose clocks are hours apart still share one exact limit: scripts
 * decide at Redis's clock and windows are located on it.
 */
class ServerTimeTest {
  private static RedissonClient client;

  @BeforeAll
  static void connect() {
    client = Clients.single(RedisServer.shared().url());
  }

  @AfterAll
  static void disconnect() {
    client.shutdown();
  }

  private static RateLimiter limiter(String prefix, Instant clock, boolean nearCache) {
    return RateLimiter.builder().clock(ManualClock.at(clock)).nearCache(nearCache)
        .backend(RedisBackend.builder(client).keyPrefix(prefix).serverTime(true).build()).build();
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void instancesWithSkewedClocksShareOneLimit(Algorithm algorithm) {
    String prefix = Clients.uniquePrefix();
    Policy p = Policy.of(4, Duration.ofHours(1), algorithm);
    try (RateLimiter ahead = limiter(prefix, Instant.now().plus(Duration.ofHours(5)), false);
        RateLimiter behind = limiter(prefix, Instant.ofEpochSecond(1_000_000_000L), false)) {
      assertThat(ahead.check("k", p, 2).allowed()).isTrue();
      assertThat(behind.check("k", p, 2).allowed()).isTrue();
      Decision denied = ahead.check("k", p);
      assertThat(denied.allowed()).isFalse();
      assertThat(behind.check("k", p).allowed()).isFalse();
      assertThat(denied.retryAfter()).isPositive().isLessThanOrEqualTo(Duration.ofHours(2)); // a sliding window waits up to 2 W
      assertThat(behind.inspect("k", p).remaining()).isZero();
      MultiDecision all = behind.checkAll("k", List.of(p, Policy.of(100, Duration.ofMinutes(1)).withName("other")), 1);
      assertThat(all.allowed()).isFalse();
      assertThat(all.decisions()).extracting(Decision::allowed).containsExactly(false, true);
    }
  }

  @Test
  void theNearCacheFollowsTheServersClock() {
    String prefix = Clients.uniquePrefix();
    Policy p = Policy.of(2, Duration.ofHours(1));
    try (RateLimiter skewed = limiter(prefix, Instant.ofEpochSecond(1_000_000_000L), true)) {
      skewed.check("k", p, 2);
      Decision first = skewed.check("k", p);
      Decision local = skewed.check("k", p);
      assertThat(first.allowed()).isFalse();
      assertThat(local.allowed()).isFalse();
      assertThat(local.retryAfter()).as("the limiter's clock stands still, so does the cached answer")
          .isEqualTo(first.retryAfter());
    }
  }
}

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
  void aCheckAllOnAClockHoursOffCountsInTheServersWindows() {
    String prefix = Clients.uniquePrefix();
    List<Policy> policies = List.of(Policy.of(3, Duration.ofHours(1), Algorithm.FIXED_WINDOW),
        Policy.of(3, Duration.ofHours(1), Algorithm.SLIDING_WINDOW));
    long behind = 1_000_000_000_000_000L; // 2001
    long ahead = (System.currentTimeMillis() + Duration.ofHours(5).toMillis()) * 1_000L;
    // the windows are the server's: the limiters' clocks, years apart, name no window
    RedisBackend sync = RedisBackend.builder(client).keyPrefix(prefix).serverTime(true).build();
    RedisBackend async = RedisBackend.builder(client).keyPrefix(prefix).serverTime(true).build();
    MultiDecision first = sync.checkAll("k", policies, 2, behind);
    assertThat(first.allowed()).isTrue();
    assertThat(first.decisions()).extracting(Decision::remaining).containsExactly(1L, 1L);
    MultiDecision second = async.checkAllAsync("k", policies, 1, ahead).toCompletableFuture().join();
    assertThat(second.allowed()).isTrue();
    assertThat(second.decisions()).extracting(Decision::remaining).containsExactly(0L, 0L);
    assertThat(sync.checkAll("k", policies, 1, behind).allowed()).isFalse();
    assertThat(async.checkAllAsync("k", policies, 1, ahead).toCompletableFuture().join().allowed()).isFalse();
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

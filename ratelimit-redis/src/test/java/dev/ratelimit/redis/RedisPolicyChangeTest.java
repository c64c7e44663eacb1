package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * A named policy's numbers changed between checks (same name, new limit) take effect on the next
 * check, on the state the key already has in Redis. The same numbers as the in-memory twin,
 * {@code dev.ratelimit.memory.PolicyChangeTest}.
 */
class RedisPolicyChangeTest {
  private static RedisServer server;
  private static RedissonClient client;

  private final ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L)); // 20 s into a minute
  private RateLimiter limiter;

  @BeforeAll
  static void connect() {
    server = RedisServer.shared();
    client = Clients.single(server.url());
  }

  @AfterAll
  static void disconnect() {
    client.shutdown();
    server.close();
  }

  @BeforeEach
  void newLimiter() {
    limiter = RateLimiter.builder().clock(clock)
        .backend(RedisBackend.builder(client).keyPrefix(Clients.uniquePrefix()).build()).build();
  }

  @AfterEach
  void closeLimiter() {
    limiter.close();
  }

  @Test
  void aFixedWindowKeepsItsCountUnderANewLimit() {
    Policy v1 = Policy.of(5, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW).withName("api");
    Policy v2 = Policy.of(10, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW).withName("api");
    Policy v3 = Policy.of(3, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW).withName("api");
    assertThat(limiter.check("k", v1, 3).remaining()).isEqualTo(2);
    Decision raised = limiter.check("k", v2);
    assertThat(raised.isDegraded()).isFalse();
    assertThat(raised.allowed()).isTrue();
    assertThat(raised.remaining()).as("10 - (3 + 1): the count was kept").isEqualTo(6);
    Decision lowered = limiter.check("k", v3);
    assertThat(lowered.allowed()).as("4 already counted against a limit of 3").isFalse();
    assertThat(lowered.remaining()).isZero();
    assertThat(lowered.retryAfter()).as("until the window ends").isEqualTo(Duration.ofSeconds(40));
    assertThat(limiter.check("k", v2).remaining()).as("back to 10: still the same count").isEqualTo(5);
  }

  @Test
  void gcraKeepsItsTheoreticalArrivalTimeUnderANewRate() {
    Policy v1 = Policy.of(10, Duration.ofMinutes(1)).withName("api"); // T = 6 s
    Policy v2 = Policy.of(20, Duration.ofMinutes(1)).withName("api"); // T = 3 s, burst 20
    Policy v3 = Policy.of(2, Duration.ofMinutes(1)).withName("api");  // T = 30 s, burst 2
    assertThat(limiter.check("k", v1, 5).remaining()).isEqualTo(5); // tat = t + 30 s
    Decision raised = limiter.check("k", v2);
    assertThat(raised.isDegraded()).isFalse();
    assertThat(raised.allowed()).isTrue();
    assertThat(raised.remaining()).as("30 s of debt is 10 units at the new rate, + 1").isEqualTo(9);
    assertThat(raised.resetAfter()).isEqualTo(Duration.ofSeconds(33));
    Decision lowered = limiter.check("k", v3);
    assertThat(lowered.allowed()).isFalse();
    assertThat(lowered.retryAfter()).isEqualTo(Duration.ofSeconds(3));
    clock.advance(Duration.ofSeconds(3));
    assertThat(limiter.check("k", v3).allowed()).isTrue();
  }
}

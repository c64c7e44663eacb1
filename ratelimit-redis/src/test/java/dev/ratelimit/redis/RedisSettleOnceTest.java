package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.spi.Command;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.redisson.api.RedissonClient;

/**
 * settle.lua applies a settle identity once: the same give-back or charge sent again (a retry of a
 * settle whose answer was lost) changes nothing; without an identity it is applied each time.
 */
class RedisSettleOnceTest {
  private static final String PREFIX = Clients.uniquePrefix();
  private static RedissonClient client;

  @BeforeAll
  static void connect() {
    client = Clients.single(RedisServer.shared().url());
  }

  @AfterAll
  static void disconnect() {
    client.shutdown();
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void aSettleSentAgainWithItsIdentityIsAppliedOnce(Algorithm algorithm) {
    ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
    RedisBackend backend = RedisBackend.builder(client).keyPrefix(PREFIX).timeout(Duration.ofSeconds(10)).build();
    Policy p = Policy.of(10, Duration.ofMinutes(1)).withAlgorithm(algorithm);
    try (RateLimiter limiter = RateLimiter.builder().backend(backend).clock(clock).nearCache(false).build()) {
      String key = "once-" + algorithm + "-" + System.nanoTime();
      Reservation a = limiter.reserve(key, p, 3);
      Reservation b = limiter.reserve(key, p, 3);
      assertThat(limiter.inspect(key, p).remaining()).isEqualTo(4);
      long now = clock.millis() * 1000;
      Command.GiveBack giveBack = new Command.GiveBack(key, List.of(p), a.marks(), 3, now, 42);
      backend.execute(giveBack);
      backend.execute(giveBack);
      assertThat(limiter.inspect(key, p).remaining()).as("given back once").isEqualTo(7);
      Command.Charge charge = new Command.Charge(key, List.of(p), 2, now, 43);
      backend.execute(charge);
      backend.execute(charge);
      assertThat(limiter.inspect(key, p).remaining()).as("charged once").isEqualTo(5);
      Command.Charge plain = new Command.Charge(key, List.of(p), 1, now);
      backend.execute(plain);
      backend.execute(plain);
      assertThat(limiter.inspect(key, p).remaining()).as("without an identity: each time").isEqualTo(3);
      b.cancel();
      assertThat(limiter.inspect(key, p).remaining()).as("the limiter's own settle carries another identity")
          .isEqualTo(6);
    }
  }
}

package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.redisson.api.RedissonClient;

/**
 * Random traces of checks, reservations, settles (give-backs and charges) and waits, run on the
 * in-memory backend and on Redis at the same times: every answer, and after every step what each
 * cost would get, decision for decision the same.
 */
class ReservationDifferentialTest {
  private static final String PREFIX = Clients.uniquePrefix();
  private static final Instant START = Instant.ofEpochSecond(1_700_000_000L);
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
  void memoryAndRedisDecideAlike(Algorithm algorithm) {
    Policy p = Policy.of(7, Duration.ofSeconds(10)).withAlgorithm(algorithm);
    if (algorithm.usesBurst()) {
      p = p.withBurst(5);
    }
    for (int trace = 0; trace < 12; trace++) {
      ManualClock memoryClock = ManualClock.at(START);
      ManualClock redisClock = ManualClock.at(START);
      try (RateLimiter memory = RateLimiter.builder().clock(memoryClock).backend(InMemoryBackend.create()).build();
          RateLimiter redis = RateLimiter.builder().clock(redisClock).nearCache(false)
              .backend(RedisBackend.builder(client).keyPrefix(PREFIX).timeout(Duration.ofSeconds(10)).build())
              .timeout(Duration.ofSeconds(10)).build()) {
        run(p, new Random(trace * 7919L + algorithm.ordinal()), "trace-" + algorithm + "-" + trace, memory, redis,
            memoryClock, redisClock);
      }
    }
  }

  private static void run(Policy p, Random random, String key, RateLimiter memory, RateLimiter redis,
      ManualClock memoryClock, ManualClock redisClock) {
    List<Reservation[]> open = new ArrayList<>();
    for (int step = 0; step < 60; step++) {
      String as = key + " step " + step;
      int op = random.nextInt(8);
      long cost = 1 + random.nextInt((int) p.capacity());
      if (op <= 1) {
        assertThat(redis.check(key, p, cost)).as(as).isEqualTo(memory.check(key, p, cost));
      } else if (op <= 3) {
        Reservation m = memory.reserve(key, p, cost);
        Reservation r = redis.reserve(key, p, cost);
        assertThat(r.decision()).as(as).isEqualTo(m.decision());
        if (m.allowed()) {
          open.add(new Reservation[] {m, r});
        }
      } else if (op <= 5 && !open.isEmpty()) {
        Reservation[] pair = open.remove(random.nextInt(open.size()));
        long actual = random.nextInt((int) (2 * pair[0].estimate() + 2)); // 0: cancel; above: a charge
        for (Reservation r : pair) {
          if (actual == 0) {
            r.cancel();
          } else {
            r.commit(actual);
          }
        }
      } else {
        long wait = random.nextBoolean() ? random.nextInt(3_000_000) : random.nextInt(10_000);
        memoryClock.advanceMicros(wait);
        redisClock.advanceMicros(wait);
      }
      for (long c = 1; c <= p.capacity(); c++) {
        Decision m = memory.peekAll(key, List.of(p), c).decisions().get(0);
        Decision r = redis.peekAll(key, List.of(p), c).decisions().get(0);
        assertThat(r).as("%s, cost %d", as, c).isEqualTo(m);
      }
    }
  }
}

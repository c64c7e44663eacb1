package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.ManualClock;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.redisson.api.RedissonClient;

/**
 * The near-cache never changes an answer: the same trace through Redis with the near-cache, Redis
 * without it and the in-memory backend gives identical decisions, call for call; and a hot denied
 * key stops costing round trips.
 */
class NearCacheTest {
  private static RedisServer server;
  private static RedissonClient client;

  private final ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
  private RateLimiter cached;
  private RateLimiter uncached;
  private RateLimiter memory;

  @BeforeAll
  static void startServer() {
    server = RedisServer.start(); // the load test reads this server's command statistics
    client = Clients.single(server.url());
  }

  @AfterAll
  static void stopServer() {
    client.shutdown();
    server.close();
  }

  @BeforeEach
  void limiters() {
    cached = RateLimiter.builder().clock(clock).nearCache(true)
        .backend(RedisBackend.builder(client).keyPrefix(Clients.uniquePrefix()).build()).build();
    uncached = RateLimiter.builder().clock(clock).nearCache(false)
        .backend(RedisBackend.builder(client).keyPrefix(Clients.uniquePrefix()).build()).build();
    memory = RateLimiter.builder().clock(clock).backend(InMemoryBackend.create()).build();
  }

  @AfterEach
  void close() {
    cached.close();
    uncached.close();
    memory.close();
  }

  @Test
  void randomTracesGiveIdenticalDecisionsWithAndWithoutTheNearCache() {
    SplittableRandom random = new SplittableRandom(17);
    List<Policy> policies = List.of(
        Policy.of(5, Duration.ofSeconds(2), Algorithm.FIXED_WINDOW),
        Policy.of(5, Duration.ofSeconds(2), Algorithm.SLIDING_LOG),
        Policy.of(5, Duration.ofSeconds(2), Algorithm.SLIDING_WINDOW),
        Policy.of(5, Duration.ofMillis(1_999), Algorithm.TOKEN_BUCKET).withBurst(3),
        Policy.of(7, Duration.ofMillis(3_001), Algorithm.GCRA),
        Policy.of(4, Duration.ofSeconds(1), Algorithm.LEAKY_BUCKET).withBurst(2));
    int local = 0;
    for (int i = 0; i < 4_000; i++) {
      String key = random.nextInt(4) == 0 ? "cold-" + random.nextInt(50) : "hot-" + random.nextInt(3);
      long cost = 1 + random.nextInt(2);
      if (random.nextInt(8) == 0) {
        List<Policy> some = List.of(policies.get(random.nextInt(3)), policies.get(3 + random.nextInt(3)));
        MultiDecision expected = memory.checkAll(key, some, cost);
        assertThat(uncached.checkAll(key, some, cost)).as("call %d", i).isEqualTo(expected);
        assertThat(cached.checkAll(key, some, cost)).as("call %d", i).isEqualTo(expected);
      } else {
        Policy p = policies.get(random.nextInt(policies.size()));
        Decision expected = memory.check(key, p, cost);
        assertThat(uncached.check(key, p, cost)).as("call %d", i).isEqualTo(expected);
        long before = evalshaCalls();
        assertThat(cached.check(key, p, cost)).as("call %d", i).isEqualTo(expected);
        local += evalshaCalls() == before ? 1 : 0;
      }
      clock.advanceMicros(random.nextInt(5) == 0 ? random.nextLong(400_000) : random.nextLong(20_000));
    }
    assertThat(local).as("the near-cache answered some checks").isGreaterThan(50);
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void aHotDeniedKeyCostsAtMostOneRoundTripPerRetryPeriod(Algorithm algorithm) {
    Policy p = Policy.of(10, Duration.ofSeconds(10), algorithm);
    server.command("CONFIG", "RESETSTAT");
    for (int i = 0; i < 100_000; i++) {
      long cost = 1 + (i % 3);
      Decision expected = memory.check("attacked", p, cost);
      assertThat(cached.check("attacked", p, cost)).as("check %d", i).isEqualTo(expected);
      // 100,000 checks in 20 s of the manual clock: a flood far past 1 per second. (The manual
      // clock must outrun real time: Redis expires keys on its own clock.)
      clock.advanceMicros(200);
    }
    long calls = evalshaCalls();
    // 20 s at 1 per second: about 20 retry periods, each one allowed call and one denial to learn
    assertThat(calls).as("Redis calls for 100,000 checks of one hot key").isBetween(2L, 100L);
  }

  @Test
  void aRaisedLimitIsSeenOnTheNextCheck() {
    Policy small = Policy.of(2, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW).withName("api");
    Policy raised = Policy.of(5, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW).withName("api");
    cached.check("k", small, 2);
    assertThat(cached.check("k", small).allowed()).isFalse();
    assertThat(cached.check("k", small).allowed()).as("answered locally").isFalse();
    Decision next = cached.check("k", raised);
    assertThat(next.allowed()).as("the raised limit, at once, keeping the count").isTrue();
    assertThat(next.remaining()).isEqualTo(2);
  }

  @Test
  void resetClearsTheLocalEntry() {
    Policy p = Policy.of(1, Duration.ofMinutes(1));
    cached.check("k", p);
    assertThat(cached.check("k", p).allowed()).isFalse();
    cached.reset("k", p);
    assertThat(cached.check("k", p).allowed()).isTrue();
  }

  private static long evalshaCalls() {
    Matcher m = Pattern.compile("cmdstat_evalsha:calls=(\\d+)").matcher(server.info("commandstats"));
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }
}

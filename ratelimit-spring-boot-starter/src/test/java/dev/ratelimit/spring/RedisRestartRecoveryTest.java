package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Decision;
import dev.ratelimit.FailureMode;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimitListener.CircuitState;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * A quick Redis restart under the starter's defaults (its own Redisson client, the default circuit
 * breaker): within a second of Redis answering again, Redis decides again, and goes on deciding.
 * With the fixed 5 s cool-down, FAIL_CLOSED went on denying everything for about 4 s after the
 * restart, and LOCAL_FALLBACK flapped between Redis and the local fallback for 9 s.
 */
class RedisRestartRecoveryTest {
  private static final long LIMIT = 1_000_000;
  /** A decision with at least this many remaining came from Redis (the local fallback holds half). */
  private static final long FROM_REDIS = LIMIT / 2;

  private final Policy policy = Policy.of(LIMIT, Duration.ofHours(1)).withName("recovery");
  private RedisServer server;

  @BeforeEach
  void start() {
    server = RedisServer.start();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  @ParameterizedTest
  @EnumSource(FailureMode.class)
  @Timeout(60)
  void redisDecidesAgainWithinASecondOfAnsweringAfterARestart(FailureMode mode) {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
        .withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.url=" + server.url(),
            "ratelimit.redis.key-prefix=recovery-" + System.nanoTime(), "ratelimit.failure-mode=" + mode,
            "ratelimit.local-fallback-share=0.5")
        .run(context -> {
          RateLimiter limiter = context.getBean(RateLimiter.class);
          assertThat(poll(limiter, TimeUnit.SECONDS.toNanos(10))).as("Redis decides before the outage").isNotNull();

          server.stop();
          long stopped = System.nanoTime();
          while (limiter.circuitState() != CircuitState.OPEN && System.nanoTime() - stopped < TimeUnit.SECONDS.toNanos(10)) {
            limiter.check("k", policy);
          }
          assertThat(limiter.circuitState()).as("the outage opened the circuit").isEqualTo(CircuitState.OPEN);
          for (int i = 0; i < 20; i++) {
            assertThat(fromRedis(limiter.check("k", policy))).as("the failure mode decides").isFalse();
          }

          server.restart(); // returns once the server answers PING
          long answering = System.nanoTime();
          Decision first = poll(limiter, TimeUnit.SECONDS.toNanos(1));
          assertThat(first).as("a decision by Redis within 1 s of it answering (%s, circuit %s)", mode,
              limiter.circuitState()).isNotNull();
          System.out.printf("RedisRestartRecoveryTest %s: Redis decided again %.0f ms after it answered%n", mode,
              (System.nanoTime() - answering) / 1e6);
          List<Decision> after = new ArrayList<>();
          for (int i = 0; i < 50; i++) {
            after.add(limiter.check("k", policy));
          }
          assertThat(after).as("and goes on deciding").allMatch(RedisRestartRecoveryTest::fromRedis);
          assertThat(limiter.circuitState()).isEqualTo(CircuitState.CLOSED);
        });
  }

  /** Checks every 10 ms until Redis decides (returned), or {@code patienceNanos} pass (null). */
  private Decision poll(RateLimiter limiter, long patienceNanos) throws InterruptedException {
    long deadline = System.nanoTime() + patienceNanos;
    do {
      Decision d = limiter.check("k", policy);
      if (fromRedis(d)) {
        return d;
      }
      Thread.sleep(10);
    } while (System.nanoTime() - deadline < 0);
    return null;
  }

  /** Allowed, not degraded, and out of the whole limit, not the local fallback's half. */
  private static boolean fromRedis(Decision d) {
    return d.allowed() && !d.isDegraded() && d.remaining() >= FROM_REDIS;
  }
}

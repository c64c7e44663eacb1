package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Decision;
import dev.ratelimit.FailureMode;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.tck.docs.DocPage;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** The Java examples of docs/redis.md and docs/failure-handling.md, run as written there against real Redis. */
class DocsRedisExamplesTest {
  private static final String SOURCE = "src/test/java/dev/ratelimit/redis/DocsRedisExamplesTest.java";

  @Test
  void thePagesShowTheCodeThisTestRuns() {
    DocPage redis = DocPage.read("docs/redis.md");
    redis.assertRunBy(redis.block("java", "Redisson.create(config)"), SOURCE);
    redis.assertRunBy(redis.block("java", "RedisClients.open(url,"), SOURCE);
    DocPage failures = DocPage.read("docs/failure-handling.md");
    failures.assertRunBy(failures.block("java", "LOCAL_FALLBACK"), SOURCE);
  }

  private static Config config(RedisServer server) {
    Config config = new Config();
    config.useSingleServer().setAddress(server.url()).setTimeout(1_000).setRetryAttempts(0);
    return config;
  }

  @Test
  void theUrlExampleOpensAClientWithTheUrlsUserAndDatabase() {
    try (RedisServer server = RedisServer.builder().user("limiter", "s3cret").start()) {
      String url = "redis://limiter:s3cret@" + server.host() + ":" + server.port() + "/3";
      // --- as in the page
      RedissonClient client = RedisClients.open(url,                 // e.g. redis://limiter:s3cret@cache:6379/0
          Duration.ofMillis(200), "ratelimit.redis.url");              // the setting messages name; yours to shut down
      RateLimiter limiter = RateLimiter.builder()
          .backend(RedisBackend.builder(client).timeout(Duration.ofMillis(200)).build())
          .build();
      // ---
      try {
        assertThat(limiter.check("k", Policy.parse("1/1m")).isDegraded()).isFalse();
        assertThat(server.info("keyspace")).as("as the limiter's user, in database 3").contains("db3:keys=1");
      } finally {
        limiter.close();
        client.shutdown();
      }
    }
  }

  @Test
  void theRedisBackendExampleSharesALimitThroughRedis() {
    Config config = config(RedisServer.shared());
    String key = Clients.uniquePrefix();
    Policy policy = Policy.parse("2/1m");
    // --- as in the page
    RedissonClient redisson = Redisson.create(config);            // your client; the backend never closes it
    RateLimiter limiter = RateLimiter.builder()
        .backend(RedisBackend.builder(redisson)
            .keyPrefix("rl")                                       // default "rl"
            .timeout(Duration.ofMillis(200))                       // per call, default 200 ms
            .build())
        .failureMode(FailureMode.FAIL_OPEN)                        // what a Redis error or timeout decides
        .build();
    // ---
    RateLimiter other = RateLimiter.builder().backend(RedisBackend.builder(redisson).build()).build();
    try {
      assertThat(limiter.check(key, policy).remaining()).isEqualTo(1);
      assertThat(other.check(key, policy).remaining()).as("another instance, the same limit").isZero();
      Decision denied = limiter.check(key, policy);
      assertThat(denied.allowed()).isFalse();
      assertThat(denied.isDegraded()).isFalse();
    } finally {
      limiter.close();
      other.close();
      redisson.shutdown();
    }
  }

  @Test
  void theFailureHandlingExampleFallsBackLocallyWhenRedisIsGone() {
    List<RateLimitListener.Outcome> outcomes = new CopyOnWriteArrayList<>();
    RateLimitListener metrics = new RateLimitListener() {
      @Override
      public void onDecision(Policy policy, Outcome outcome) {
        outcomes.add(outcome);
      }
    };
    Policy api = Policy.of(8, Duration.ofMinutes(1)).withName("api");
    try (RedisServer server = RedisServer.start()) {
      RedissonClient redisson = Redisson.create(config(server));
      // --- as in the page
      RateLimiter limiter = RateLimiter.builder()
          .backend(RedisBackend.builder(redisson).timeout(Duration.ofMillis(100)).build())
          .timeout(Duration.ofMillis(150))                 // per call, default 250 ms
          .failureMode(FailureMode.LOCAL_FALLBACK)         // FAIL_OPEN (default) or FAIL_CLOSED
          .localFallbackShare(0.25)                        // 4 instances: each admits a quarter locally
          .failClosedRetryAfter(Duration.ofSeconds(1))     // default
          .circuitBreaker(5, Duration.ofSeconds(5))        // default: probes from 100 ms, at most 5 s apart; (0, null) disables it
          .shadowPolicies(Set.of("login-v2"))              // dark launch: counted, reported, never blocking
          .listener(metrics)                               // call again to add more listeners
          .build();
      // ---
      try {
        assertThat(limiter.check("k", api).remaining()).as("Redis decides").isEqualTo(7);
        server.stop();
        int admitted = 0;
        for (int i = 0; i < 4; i++) {
          Decision d = limiter.check("k", api);
          assertThat(d.isDegraded()).as("the local fallback's decisions are real").isFalse();
          admitted += d.allowed() ? 1 : 0;
        }
        assertThat(admitted).as("a quarter of 8, locally").isEqualTo(2);
        assertThat(outcomes).startsWith(RateLimitListener.Outcome.ALLOWED)
            .endsWith(RateLimitListener.Outcome.FALLBACK_ALLOWED, RateLimitListener.Outcome.FALLBACK_ALLOWED,
                RateLimitListener.Outcome.FALLBACK_DENIED, RateLimitListener.Outcome.FALLBACK_DENIED);
      } finally {
        limiter.close();
        redisson.shutdown();
      }
    }
  }
}

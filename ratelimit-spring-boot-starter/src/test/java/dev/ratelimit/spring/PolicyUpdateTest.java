package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.annotation.RateLimitExceededException;
import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** {@link PolicyRegistry#update}: the next call sees the new numbers, and no key loses its count. */
class PolicyUpdateTest {
  private static final Instant START = Instant.ofEpochSecond(1_700_000_000L); // 20 s into its minute

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, AopAutoConfiguration.class))
      .withUserConfiguration(Beans.class)
      .withPropertyValues("ratelimit.policies.api.limit=2", "ratelimit.policies.api.window=1m",
          "ratelimit.policies.api.algorithm=FIXED_WINDOW",
          "ratelimit.policies.smooth.limit=2", "ratelimit.policies.smooth.window=1m");

  @Configuration(proxyBeanMethods = false)
  static class Beans {
    @Bean
    InstantSource clock() {
      return ManualClock.at(START);
    }

    @Bean
    Service service() {
      return new Service();
    }
  }

  public static class Service {
    @RateLimited(key = "#user", policy = "api")
    public String api(String user) {
      return "ok";
    }

    @RateLimited(key = "#user", policy = "smooth")
    public String smooth(String user) {
      return "ok";
    }

    /** Two units a call of 'smooth': a capacity below 2 would refuse every call. */
    @RateLimited(key = "#user", policy = "smooth", cost = "2")
    public String heavy(String user) {
      return "ok";
    }

    @RateLimited(key = "#user", limit = 2, window = "1m", name = "inline")
    public String inline(String user) {
      return "ok";
    }
  }

  private static int allowed(Runnable call, int times) {
    int allowed = 0;
    for (int i = 0; i < times; i++) {
      try {
        call.run();
        allowed++;
      } catch (RateLimitExceededException e) {
        // denied
      }
    }
    return allowed;
  }

  private static Policy fixed(long limit) {
    return Policy.of(limit, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW);
  }

  private static void raiseMidRun(AssertableApplicationContext context, String user) {
    Service service = context.getBean(Service.class);
    PolicyRegistry registry = context.getBean(PolicyRegistry.class);
    assertThat(allowed(() -> service.api(user), 3)).isEqualTo(2);

    Policy stored = registry.update("api", fixed(5));

    assertThat(stored).isEqualTo(fixed(5).withName("api"));
    assertThat(service.api(user)).as("the next call sees the new limit").isEqualTo("ok");
    assertThat(allowed(() -> service.api(user), 5)).as("2 counted before the update, 1 just now").isEqualTo(2);
    assertThat(allowed(() -> service.api(user + "-other"), 7)).isEqualTo(5);
    assertThat(context.getBean(RateLimiter.class).inspect(user, registry.get("api", "test")).remaining()).isZero();
  }

  @Test
  void aRaisedLimitAppliesAtOnceAndKeysKeepTheirCounts() {
    runner.run(context -> raiseMidRun(context, "alice"));
  }

  @Test
  void aRaisedLimitAppliesAtOnceAndKeysKeepTheirCountsInRedis() {
    runner.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.url=" + RedisServer.shared().url(),
        "ratelimit.redis.key-prefix=policy-update-" + System.nanoTime()).run(context -> {
          RateLimiter limiter = context.getBean(RateLimiter.class);
          assertThat(limiter).isNotNull();
          assertThat(context.getBean(dev.ratelimit.spi.Backend.class)).isInstanceOf(dev.ratelimit.redis.RedisBackend.class);
          RedisWarmUp.warmUp(limiter);
          raiseMidRun(context, "alice");
        });
  }

  /** GCRA keeps a time, not a count: what was booked at the old rate stays booked. */
  @Test
  void gcraKeepsTheTimeBookedAtTheOldRate() {
    runner.run(context -> {
      Service service = context.getBean(Service.class);
      ManualClock clock = (ManualClock) context.getBean(InstantSource.class);
      assertThat(allowed(() -> service.smooth("bob"), 3)).isEqualTo(2); // 2 per minute: booked 60 s ahead
      context.getBean(PolicyRegistry.class).update("smooth", Policy.of(4, Duration.ofMinutes(1)));
      assertThatThrownBy(() -> service.smooth("bob")).isInstanceOfSatisfying(RateLimitExceededException.class,
          e -> assertThat(e.decision().retryAfter()).as("60 s booked, 4 × 15 s of burst").isEqualTo(Duration.ofSeconds(15)));
      clock.advance(Duration.ofSeconds(15));
      assertThat(service.smooth("bob")).isEqualTo("ok");
      assertThat(allowed(() -> service.smooth("carol"), 6)).as("a new key gets the new burst").isEqualTo(4);
    });
  }

  /** TOKEN_BUCKET keeps its tokens; they refill at the new rate, up to the new burst. */
  @Test
  void aTokenBucketKeepsItsTokens() {
    runner.run(context -> {
      RateLimiter limiter = context.getBean(RateLimiter.class);
      ManualClock clock = (ManualClock) context.getBean(InstantSource.class);
      Policy before = Policy.of(2, Duration.ofMinutes(1), Algorithm.TOKEN_BUCKET).withName("bucket");
      Policy after = Policy.of(4, Duration.ofMinutes(1), Algorithm.TOKEN_BUCKET).withName("bucket");
      assertThat(limiter.check("erin", before, 2).allowed()).isTrue();
      assertThat(limiter.check("erin", after).retryAfter()).as("no token left: one refills in 60 s / 4")
          .isEqualTo(Duration.ofSeconds(15));
      clock.advance(Duration.ofSeconds(30));
      assertThat(limiter.check("erin", after, 2).remaining()).isZero();
      assertThat(limiter.inspect("frank", after).remaining()).as("a new key: the new burst").isEqualTo(4);
    });
  }

  @Test
  void inlinePoliciesStayFixed() {
    runner.run(context -> {
      Service service = context.getBean(Service.class);
      assertThatThrownBy(() -> context.getBean(PolicyRegistry.class).update("inline", fixed(10)))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown policy 'inline'");
      assertThat(allowed(() -> service.inline("dave"), 4)).isEqualTo(2);
    });
  }

  @Test
  void updatesAreValidated() {
    runner.run(context -> {
      PolicyRegistry registry = context.getBean(PolicyRegistry.class);
      assertThatThrownBy(() -> registry.update("nope", fixed(1)))
          .hasMessage("unknown policy 'nope'; configured policies (ratelimit.policies.*): [api, smooth]");
      assertThatThrownBy(() -> registry.update("api", fixed(1).withName("other")))
          .hasMessageContaining("policy named 'other' cannot be stored as 'api'");
      assertThat(registry.get("api", "test")).as("unchanged").isEqualTo(fixed(2).withName("api"));
      assertThat(registry.update("api", fixed(3).withName("api")).limit()).isEqualTo(3);
    });
  }

  @Test
  void anUpdateBelowAMethodsConstantCostIsRefusedAndChangesNothing() {
    runner.run(context -> {
      PolicyRegistry registry = context.getBean(PolicyRegistry.class);
      Policy before = registry.get("smooth", "test");
      assertThatThrownBy(() -> registry.update("smooth", Policy.of(1, Duration.ofMinutes(1))))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("policy 'smooth' with capacity 1 would refuse every call of")
          .hasMessageContaining("Service.heavy, whose cost is 2");
      assertThat(registry.get("smooth", "test")).as("unchanged").isEqualTo(before);
      assertThat(context.getBean(Service.class).heavy("erin")).isEqualTo("ok");
      assertThat(registry.update("smooth", Policy.of(2, Duration.ofSeconds(30))).limit()).isEqualTo(2);
    });
  }

  @Test
  void snapshotsDoNotChangeAndListenersRunInOrder() {
    PolicyRegistry registry = new PolicyRegistry(Map.of("p", fixed(1)));
    Map<String, Policy> before = registry.all();
    List<Long> seen = new ArrayList<>();
    registry.onUpdate(r -> seen.add(r.get("p", "test").limit()));
    registry.update("p", fixed(2));
    registry.update("p", fixed(3));
    assertThat(before.get("p").limit()).isEqualTo(1);
    assertThat(before.get("p").name()).as("stored under its key").isEqualTo("p");
    assertThat(seen).containsExactly(2L, 3L);
    assertThatThrownBy(() -> before.put("q", fixed(1))).isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void concurrentUpdatesAndReadsAreSafe() throws Exception {
    PolicyRegistry registry = new PolicyRegistry(Map.of("p", fixed(1)));
    AtomicInteger notified = new AtomicInteger();
    registry.onUpdate(r -> notified.incrementAndGet());
    ExecutorService pool = Executors.newFixedThreadPool(8);
    CountDownLatch go = new CountDownLatch(1);
    try {
      List<Future<?>> tasks = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        boolean writer = t % 2 == 0;
        tasks.add(pool.submit(() -> {
          go.await();
          for (int i = 1; i <= 500; i++) {
            if (writer) {
              registry.update("p", fixed(i));
            } else {
              Policy p = registry.get("p", "test");
              assertThat(p.name()).isEqualTo("p");
              assertThat(p.limit()).isBetween(1L, 500L);
            }
          }
          return null;
        }));
      }
      go.countDown();
      for (Future<?> task : tasks) {
        task.get(30, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(notified).hasValue(4 * 500);
    assertThat(registry.get("p", "test").limit()).isEqualTo(500);
  }
}

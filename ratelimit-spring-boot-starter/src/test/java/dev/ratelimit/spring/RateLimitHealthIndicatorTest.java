package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.tck.redis.RedisServer;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The backend's health: UP for memory and a live Redis, DOWN naming the error for a dead one. */
class RateLimitHealthIndicatorTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitHealthAutoConfiguration.class));

  @Test
  void memoryIsUp() {
    runner.run(context -> {
      Health health = context.getBean("ratelimitHealthIndicator", HealthIndicator.class).health();
      assertThat(health.getStatus()).isEqualTo(Status.UP);
      assertThat(health.getDetails()).containsEntry("backend", "memory").containsEntry("remote", false);
    });
  }

  @Test
  void liveRedisIsUp() {
    runner.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.url=" + RedisServer.shared().url(),
        "ratelimit.redis.timeout=5s", "ratelimit.timeout=5s", "ratelimit.redis.key-prefix=health-" + System.nanoTime())
        .run(context -> {
          Health health = context.getBean("ratelimitHealthIndicator", HealthIndicator.class).health();
          assertThat(health.getStatus()).isEqualTo(Status.UP);
          assertThat(health.getDetails()).containsEntry("backend", "redis").containsEntry("remote", true);
        });
  }

  /**
   * A dead Redis: DOWN only when the limiter then denies everything (FAIL_CLOSED); under FAIL_OPEN
   * and LOCAL_FALLBACK the application serves, and a load balancer must not take it out.
   */
  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.EnumSource(dev.ratelimit.FailureMode.class)
  void deadRedisIsDownOnlyUnderFailClosedAndAlwaysNamesTheError(dev.ratelimit.FailureMode mode) throws Exception {
    int deadPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      deadPort = socket.getLocalPort(); // closed again: nothing listens there
    }
    runner.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.url=redis://127.0.0.1:" + deadPort,
        "ratelimit.redis.timeout=300ms", "ratelimit.timeout=300ms", "ratelimit.failure-mode=" + mode).run(context -> {
          Health health = context.getBean("ratelimitHealthIndicator", HealthIndicator.class).health();
          assertThat(health.getStatus()).isEqualTo(mode == dev.ratelimit.FailureMode.FAIL_CLOSED ? Status.DOWN : Status.UP);
          assertThat(health.getDetails()).containsEntry("backend", "redis").containsEntry("backendUp", false)
              .containsEntry("failureMode", mode.name()).containsKey("error");
        });
  }

  /** The limiter's own failure mode counts, not the property's default: the application built it. */
  @Test
  void anApplicationsFailClosedLimiterMakesADeadRedisDown() throws Exception {
    int deadPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      deadPort = socket.getLocalPort();
    }
    runner.withUserConfiguration(FailClosedLimiter.class)
        .withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.url=redis://127.0.0.1:" + deadPort,
            "ratelimit.redis.timeout=300ms", "ratelimit.timeout=300ms").run(context -> {
          Health health = context.getBean("ratelimitHealthIndicator", HealthIndicator.class).health();
          assertThat(health.getStatus()).isEqualTo(Status.DOWN);
          assertThat(health.getDetails()).containsEntry("failureMode", "FAIL_CLOSED");
        });
  }

  @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
  static class FailClosedLimiter {
    @org.springframework.context.annotation.Bean
    dev.ratelimit.RateLimiter limiter(dev.ratelimit.spi.Backend backend) {
      return dev.ratelimit.RateLimiter.builder().backend(backend).failureMode(dev.ratelimit.FailureMode.FAIL_CLOSED)
          .build();
    }
  }

  @Test
  void offWhenDisabledOrWithoutBootsHealthSupport() {
    runner.withPropertyValues("management.health.ratelimit.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean("ratelimitHealthIndicator"));
    runner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
        .run(context -> assertThat(context).doesNotHaveBean("ratelimitHealthIndicator"));
  }
}

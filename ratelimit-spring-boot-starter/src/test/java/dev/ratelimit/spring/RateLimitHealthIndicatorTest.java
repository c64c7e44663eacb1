package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.RateLimitListener.CircuitState;
import dev.ratelimit.tck.redis.RedisServer;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The backend's health: UP for memory and a live Redis; for a dead one DOWN only under FAIL_CLOSED;
 * the circuit's state; by default no detail a public endpoint should not show.
 */
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
  void deadRedisIsDownOnlyUnderFailClosed(dev.ratelimit.FailureMode mode) throws Exception {
    int deadPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      deadPort = socket.getLocalPort(); // closed again: nothing listens there
    }
    runner.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.url=redis://127.0.0.1:" + deadPort,
        "ratelimit.redis.timeout=300ms", "ratelimit.timeout=300ms", "ratelimit.failure-mode=" + mode).run(context -> {
          Health health = context.getBean("ratelimitHealthIndicator", HealthIndicator.class).health();
          assertThat(health.getStatus()).isEqualTo(mode == dev.ratelimit.FailureMode.FAIL_CLOSED ? Status.DOWN : Status.UP);
          assertThat(health.getDetails()).containsEntry("backend", "redis").containsEntry("backendUp", false)
              .containsEntry("failureMode", mode.name());
        });
  }

  /**
   * The details exposed the Redis host and port and the exception's class to whoever could read the
   * health endpoint: by default they hold only what a public endpoint may show.
   */
  @Test
  void byDefaultADeadRedisShowsNoAddressAndNoExceptionOnlyStatusAndModes() throws Exception {
    int deadPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      deadPort = socket.getLocalPort();
    }
    runner.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.url=redis://127.0.0.1:" + deadPort,
        "ratelimit.redis.timeout=300ms", "ratelimit.timeout=300ms").run(context -> {
          Health health = context.getBean("ratelimitHealthIndicator", HealthIndicator.class).health();
          assertThat(health.getStatus()).isEqualTo(Status.UP);
          assertThat(health.getDetails()).containsOnlyKeys("backend", "remote", "backendUp", "failureMode", "circuit",
                  "probeMillis")
              .containsEntry("backendUp", false).containsEntry("failureMode", "FAIL_OPEN")
              .containsEntry("circuit", "CLOSED");
          assertThat(health.getDetails().toString()).doesNotContain(Integer.toString(deadPort))
              .doesNotContain("127.0.0.1").doesNotContain("Exception");
        });
  }

  /** The error, with the address it names, when the application says its endpoint is not public. */
  @Test
  void sensitiveDetailsOnRequestNameTheError() throws Exception {
    int deadPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      deadPort = socket.getLocalPort();
    }
    runner.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.url=redis://127.0.0.1:" + deadPort,
        "ratelimit.redis.timeout=300ms", "ratelimit.timeout=300ms", "ratelimit.health.show-sensitive-details=true")
        .run(context -> {
          Health health = context.getBean("ratelimitHealthIndicator", HealthIndicator.class).health();
          assertThat(health.getDetails()).containsEntry("backendUp", false);
          assertThat((String) health.getDetails().get("error")).contains("Exception");
        });
  }

  /**
   * The circuit's state is shown; under FAIL_CLOSED an open circuit denies every limited request
   * even once Redis answers the probe again, so the component is DOWN until the circuit closes.
   */
  @Test
  void healthShowsTheCircuitAndAnOpenCircuitUnderFailClosedIsDown() throws Exception {
    try (RedisServer redis = RedisServer.start()) {
      runner.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.url=" + redis.url(),
          "ratelimit.failure-mode=FAIL_CLOSED", "ratelimit.redis.key-prefix=health-" + System.nanoTime())
          .run(context -> {
            dev.ratelimit.RateLimiter limiter = context.getBean(dev.ratelimit.RateLimiter.class);
            HealthIndicator indicator = context.getBean("ratelimitHealthIndicator", HealthIndicator.class);
            RedisWarmUp.warmUp(limiter);
            assertThat(indicator.health().getDetails()).containsEntry("circuit", "CLOSED").containsEntry("backendUp", true);

            redis.stop();
            dev.ratelimit.Policy policy = dev.ratelimit.Policy.parse("100/1m");
            for (int i = 0; i < 100 && limiter.circuitState() != CircuitState.OPEN; i++) {
              limiter.check("k", policy);
            }
            Health open = indicator.health();
            assertThat(open.getStatus()).isEqualTo(Status.DOWN);
            assertThat(open.getDetails()).containsEntry("circuit", "OPEN").containsEntry("backendUp", false);

            redis.restart(); // no check is made: the circuit stays open
            Health answering = indicator.health();
            for (int i = 0; i < 50 && !Boolean.TRUE.equals(answering.getDetails().get("backendUp")); i++) {
              Thread.sleep(100); // Redisson reconnecting
              answering = indicator.health();
            }
            assertThat(answering.getDetails()).containsEntry("backendUp", true).containsEntry("circuit", "OPEN");
            assertThat(answering.getStatus()).as("FAIL_CLOSED still denies everything").isEqualTo(Status.DOWN);

            Thread.sleep(200); // past the first probe interval (real time is the point)
            limiter.check("k", policy); // the probe, which closes the circuit
            Health closed = indicator.health();
            assertThat(closed.getDetails()).containsEntry("circuit", "CLOSED");
            assertThat(closed.getStatus()).isEqualTo(Status.UP);
          });
    }
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

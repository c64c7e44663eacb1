package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimitListener.Outcome;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.annotation.RateLimitExceededException;
import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.spi.Command;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Micrometer meters of the auto-configured limiter, counted exactly, on a SimpleMeterRegistry bean. */
class RateLimitMetricsTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitMetricsAutoConfiguration.class,
          AopAutoConfiguration.class))
      .withUserConfiguration(Beans.class);

  @Configuration(proxyBeanMethods = false)
  static class Beans {
    @Bean
    SimpleMeterRegistry meterRegistry() {
      return new SimpleMeterRegistry();
    }

    @Bean
    InstantSource clock() {
      return ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
    }

    @Bean
    Service service() {
      return new Service();
    }
  }

  public static class Service {
    @RateLimited(key = "#user", limit = 3, window = "1m", name = "per-user")
    public String call(String user) {
      return "ok";
    }
  }

  /** A backend that always fails. */
  static final class Broken implements Backend {
    @Override
    public <R> R execute(Command<R> command) {
      throw new IllegalStateException("down");
    }
  }

  private static double decisions(MeterRegistry registry, String policy, String outcome) {
    Counter counter = registry.find(RateLimitMetrics.DECISIONS).tag("policy", policy).tag("outcome", outcome).counter();
    return counter == null ? 0 : counter.count();
  }

  private static long backendCalls(MeterRegistry registry, String outcome) {
    Timer timer = registry.find(RateLimitMetrics.BACKEND_LATENCY).tag("outcome", outcome).timer();
    return timer == null ? -1 : timer.count();
  }

  /** A give-back the backend refuses: counted by ratelimit.reservation.settle.failures, never thrown. */
  @Test
  void settlesThatCannotReachTheBackendAreCounted() {
    dev.ratelimit.memory.InMemoryBackend memory = dev.ratelimit.memory.InMemoryBackend.create();
    dev.ratelimit.spi.Backend refusesGiveBacks = new dev.ratelimit.spi.Backend() {
      @Override
      public <R> R execute(dev.ratelimit.spi.Command<R> command) {
        if (command instanceof dev.ratelimit.spi.Command.GiveBack) {
          throw new IllegalStateException("down");
        }
        return memory.execute(command);
      }

      @Override
      public boolean reserves() {
        return true;
      }
    };
    runner.withBean(RateLimiter.class, () -> RateLimiter.builder().backend(refusesGiveBacks).build()).run(context -> {
      RateLimiter limiter = context.getBean(RateLimiter.class);
      MeterRegistry registry = context.getBean(MeterRegistry.class);
      context.getBean("rateLimitSettleFailures", io.micrometer.core.instrument.binder.MeterBinder.class)
          .bindTo(registry);
      Policy p = Policy.of(5, Duration.ofMinutes(1));
      limiter.reserve("u", p, 2).commit(2);
      assertThat(registry.get(RateLimitMetricsAutoConfiguration.SETTLE_FAILURES).functionCounter().count()).isZero();
      limiter.reserve("u", p, 2).cancel();
      assertThat(registry.get(RateLimitMetricsAutoConfiguration.SETTLE_FAILURES).functionCounter().count())
          .isEqualTo(1);
    });
  }

  /** The in-memory backend's store full of live states: each new key decided unkept is counted. */
  @Test
  void checksOfNewKeysNotHeldByAFullMemoryStoreAreCounted() {
    runner.withPropertyValues("ratelimit.memory.maximum-keys=2").run(context -> {
      RateLimiter limiter = context.getBean(RateLimiter.class);
      MeterRegistry registry = context.getBean(MeterRegistry.class);
      // Boot's metrics auto-configuration binds MeterBinder beans; this context has none of it
      context.getBean("rateLimitMemoryGauges", io.micrometer.core.instrument.binder.MeterBinder.class).bindTo(registry);
      Policy p = Policy.of(5, Duration.ofMinutes(1));
      for (String user : List.of("a", "b")) {
        limiter.check(user, p);
        limiter.check(user, p); // checked again: kept
      }
      assertThat(registry.get(RateLimitMetricsAutoConfiguration.MEMORY_KEYS_NOT_HELD).functionCounter().count()).isZero();
      limiter.check("c", p);
      limiter.check("d", p);
      assertThat(registry.get(RateLimitMetricsAutoConfiguration.MEMORY_KEYS_NOT_HELD).functionCounter().count())
          .isEqualTo(2);
    });
  }

  /**
   * Most decisions of a cold instance came from FAIL_OPEN and no meter said so in one number: a
   * counter of the failure mode's decisions, and a gauge of their share over the last minute.
   */
  @Test
  void theFailureModesDecisionsAreCountedAndTheirShareOverTheLastMinuteIsAGauge() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    java.util.concurrent.atomic.AtomicLong nanos = new java.util.concurrent.atomic.AtomicLong(7_000_000_000L);
    RateLimitMetrics metrics = new RateLimitMetrics(registry, 10, nanos::get);
    Policy a = Policy.parse("10/1m").withName("a");
    Policy b = Policy.parse("10/1m").withName("b");
    assertThat(registry.get(RateLimitMetrics.FAILURE_MODE_SHARE).gauge().value()).isZero();

    metrics.onDecision(a, Outcome.ALLOWED);
    metrics.onDecision(a, Outcome.DENIED);
    metrics.onDecision(b, Outcome.DENIED_BY_NEAR_CACHE);
    metrics.onDecision(b, Outcome.SHADOW_DENIED);
    nanos.addAndGet(Duration.ofSeconds(30).toNanos());
    metrics.onDecision(a, Outcome.FAILURE_ALLOWED);
    metrics.onDecision(b, Outcome.FAILURE_DENIED);
    metrics.onDecision(a, Outcome.FALLBACK_ALLOWED);
    metrics.onDecision(b, Outcome.FALLBACK_DENIED);
    assertThat(registry.get(RateLimitMetrics.FAILURE_MODE_DECISIONS).counter().count()).isEqualTo(4);
    assertThat(registry.get(RateLimitMetrics.FAILURE_MODE_SHARE).gauge().value()).isEqualTo(0.5);

    nanos.addAndGet(Duration.ofSeconds(30).toNanos()); // the first four are a minute old
    assertThat(registry.get(RateLimitMetrics.FAILURE_MODE_SHARE).gauge().value()).isEqualTo(1.0);
    metrics.onDecision(a, Outcome.ALLOWED);
    assertThat(registry.get(RateLimitMetrics.FAILURE_MODE_SHARE).gauge().value()).isEqualTo(0.8);
    nanos.addAndGet(Duration.ofSeconds(59).toNanos());
    assertThat(registry.get(RateLimitMetrics.FAILURE_MODE_SHARE).gauge().value()).isZero();
    assertThat(registry.get(RateLimitMetrics.FAILURE_MODE_DECISIONS).counter().count()).as("a counter keeps counting")
        .isEqualTo(4);
  }

  @Test
  void allowedAndDeniedCallsAreCountedExactly() {
    runner.run(context -> {
      Service service = context.getBean(Service.class);
      int denied = 0;
      for (int i = 0; i < 8; i++) {
        try {
          service.call("alice");
        } catch (RateLimitExceededException e) {
          denied++;
        }
      }
      service.call("bob");
      SimpleMeterRegistry registry = context.getBean(SimpleMeterRegistry.class);
      assertThat(denied).isEqualTo(5);
      assertThat(decisions(registry, "per-user", "allowed")).isEqualTo(4);
      assertThat(decisions(registry, "per-user", "denied")).isEqualTo(5);
      assertThat(backendCalls(registry, "success")).as("one backend call per check").isEqualTo(9);
      assertThat(backendCalls(registry, "error")).isZero();
      assertThat(registry.find(RateLimitMetrics.BACKEND_ERRORS).counters()).isEmpty();
      assertThat(registry.get(RateLimitMetrics.CIRCUIT_STATE).gauge().value()).isZero();
      assertThat(registry.find(RateLimitMetrics.DECISIONS).counters()).as("meters only for outcomes seen").hasSize(2);
    });
  }

  @Test
  void backendFailuresAreCountedByExceptionAndTheCircuitOpens() {
    runner.withBean(Backend.class, Broken::new).run(context -> {
      Service service = context.getBean(Service.class);
      for (int i = 0; i < 7; i++) {
        assertThat(service.call("alice")).isEqualTo("ok"); // FAIL_OPEN
      }
      SimpleMeterRegistry registry = context.getBean(SimpleMeterRegistry.class);
      assertThat(decisions(registry, "per-user", "failure_allowed")).isEqualTo(7);
      assertThat(backendCalls(registry, "error")).as("5 failures open the circuit; then no calls").isEqualTo(5);
      assertThat(backendCalls(registry, "success")).isZero();
      assertThat(registry.get(RateLimitMetrics.BACKEND_ERRORS).tag("exception", "IllegalStateException").counter().count())
          .isEqualTo(5);
      assertThat(registry.get(RateLimitMetrics.CIRCUIT_STATE).gauge().value()).as("open").isEqualTo(2);
    });
  }

  @Test
  void failClosedDenialsHaveTheirOwnOutcome() {
    runner.withBean(Backend.class, Broken::new).withPropertyValues("ratelimit.failure-mode=FAIL_CLOSED").run(context -> {
      Service service = context.getBean(Service.class);
      for (int i = 0; i < 2; i++) {
        assertThatThrownBy(() -> service.call("alice")).isInstanceOf(RateLimitExceededException.class);
      }
      SimpleMeterRegistry registry = context.getBean(SimpleMeterRegistry.class);
      assertThat(decisions(registry, "per-user", "failure_denied")).isEqualTo(2);
      assertThat(decisions(registry, "per-user", "denied")).isZero();
    });
  }

  /** Every RateLimitListener bean is handed to the limiter, metrics among them. */
  @Test
  void everyListenerBeanIsRegistered() {
    AtomicInteger seen = new AtomicInteger();
    RateLimitListener mine = new RateLimitListener() {
      @Override
      public void onDecision(Policy policy, Outcome outcome) {
        seen.incrementAndGet();
      }
    };
    runner.withBean("myListener", RateLimitListener.class, () -> mine).run(context -> {
      context.getBean(Service.class).call("alice");
      context.getBean(Service.class).call("alice");
      assertThat(seen).hasValue(2);
      assertThat(decisions(context.getBean(SimpleMeterRegistry.class), "per-user", "allowed")).isEqualTo(2);
    });
  }

  @Test
  void backsOffForTheApplicationsOwnMetricsBean() {
    SimpleMeterRegistry other = new SimpleMeterRegistry();
    runner.withBean(RateLimitMetrics.class, () -> new RateLimitMetrics(other)).run(context -> {
      assertThat(context).hasSingleBean(RateLimitMetrics.class);
      context.getBean(Service.class).call("alice");
      assertThat(decisions(other, "per-user", "allowed")).isEqualTo(1);
      assertThat(decisions(context.getBean(SimpleMeterRegistry.class), "per-user", "allowed")).isZero();
    });
  }

  @Test
  void noMetricsWithoutARegistryOrWithoutMicrometer() {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitMetricsAutoConfiguration.class))
        .run(context -> assertThat(context).hasSingleBean(RateLimiter.class).doesNotHaveBean(RateLimitMetrics.class));
    runner.withClassLoader(new FilteredClassLoader(MeterRegistry.class))
        .run(context -> assertThat(context).hasSingleBean(RateLimiter.class).doesNotHaveBean(RateLimitMetrics.class));
    runner.withPropertyValues("ratelimit.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(RateLimitMetrics.class));
  }

  /** Policy names are capped: beyond the cap every policy counts under "other". */
  @Test
  void policyTagValuesAreCapped() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RateLimitMetrics metrics = new RateLimitMetrics(registry, 2);
    for (String name : List.of("a", "b", "c", "d", "a", "c")) {
      metrics.onDecision(Policy.of(1, Duration.ofSeconds(1)).withName(name), Outcome.DENIED);
    }
    assertThat(decisions(registry, "a", "denied")).isEqualTo(2);
    assertThat(decisions(registry, "b", "denied")).isEqualTo(1);
    assertThat(decisions(registry, "other", "denied")).as("c, d and c again").isEqualTo(3);
    assertThat(registry.find(RateLimitMetrics.DECISIONS).counters()).hasSize(3);
    assertThatThrownBy(() -> new RateLimitMetrics(registry, 0)).hasMessageContaining("maxPolicyTags must be at least 1");
  }

  @Test
  void everyOutcomeHasItsTag() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RateLimitMetrics metrics = new RateLimitMetrics(registry);
    Policy p = Policy.of(1, Duration.ofSeconds(1)).withName("p");
    for (Outcome outcome : Outcome.values()) {
      for (int i = 0; i <= outcome.ordinal(); i++) {
        metrics.onDecision(p, outcome);
      }
    }
    List<String> tags = List.of("allowed", "denied", "denied_by_near_cache", "failure_allowed", "failure_denied",
        "fallback_allowed", "fallback_denied", "shadow_denied");
    for (int i = 0; i < tags.size(); i++) {
      assertThat(decisions(registry, "p", tags.get(i))).as(tags.get(i)).isEqualTo(i + 1);
    }
  }

  @Test
  void circuitStatesAndErrorNames() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RateLimitMetrics metrics = new RateLimitMetrics(registry);
    metrics.onCircuitStateChange(RateLimitListener.CircuitState.CLOSED, RateLimitListener.CircuitState.OPEN);
    assertThat(registry.get(RateLimitMetrics.CIRCUIT_STATE).gauge().value()).isEqualTo(2);
    metrics.onCircuitStateChange(RateLimitListener.CircuitState.OPEN, RateLimitListener.CircuitState.HALF_OPEN);
    assertThat(registry.get(RateLimitMetrics.CIRCUIT_STATE).gauge().value()).isEqualTo(1);
    metrics.onCircuitStateChange(RateLimitListener.CircuitState.HALF_OPEN, RateLimitListener.CircuitState.CLOSED);
    assertThat(registry.get(RateLimitMetrics.CIRCUIT_STATE).gauge().value()).isZero();

    metrics.onBackendError(new java.util.concurrent.TimeoutException());
    metrics.onBackendError(new java.util.concurrent.TimeoutException());
    metrics.onBackendError(new RuntimeException() {});
    assertThat(registry.get(RateLimitMetrics.BACKEND_ERRORS).tag("exception", "TimeoutException").counter().count())
        .isEqualTo(2);
    assertThat(registry.get(RateLimitMetrics.BACKEND_ERRORS).counters()).hasSize(2);
    assertThat(registry.get(RateLimitMetrics.BACKEND_ERRORS).counters()).extracting(c -> c.getId().getTag("exception"))
        .as("an anonymous class has no simple name: its name").anySatisfy(
            tag -> assertThat(tag).startsWith(RateLimitMetricsTest.class.getName() + "$"));
    metrics.onBackendCall(Duration.ofMillis(3).toNanos(), true);
    assertThat(registry.get(RateLimitMetrics.BACKEND_LATENCY).tag("outcome", "success").timer()
        .totalTime(java.util.concurrent.TimeUnit.MILLISECONDS)).isEqualTo(3);
  }
}

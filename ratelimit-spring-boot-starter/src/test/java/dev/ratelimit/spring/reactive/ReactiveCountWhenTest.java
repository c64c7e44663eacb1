package dev.ratelimit.spring.reactive;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.annotation.RateLimitExceededException;
import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.spring.RateLimitAutoConfiguration;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@code countWhen} on methods returning a {@code Mono} or a {@code Flux}: the cost reserved when a
 * subscription is admitted, settled when the publisher ends by the condition on the last value
 * ({@code #result}) or the error ({@code #exception}); subscriptions in flight at once never pass
 * beyond the limit, and a cancelled one counts.
 */
class ReactiveCountWhenTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, AopAutoConfiguration.class))
      .withPropertyValues("ratelimit.backend=memory").withUserConfiguration(Beans.class);

  static final AtomicInteger RAN = new AtomicInteger();
  static volatile CompletableFuture<Void> release = CompletableFuture.completedFuture(null);

  @Configuration(proxyBeanMethods = false)
  static class Beans {
    @Bean
    Logins logins() {
      return new Logins();
    }
  }

  public static class Logins {
    @RateLimited(key = "#user", limit = 3, window = "15m", name = "failures", countWhen = "#result == 'failed'")
    public Mono<String> login(String user, boolean right) {
      RAN.incrementAndGet();
      return Mono.just(right ? "welcome" : "failed");
    }

    /** Answers 'failed' once {@link #release} completes. */
    @RateLimited(key = "#user", limit = 4, window = "15m", name = "held", countWhen = "#result == 'failed'")
    public Mono<String> held(String user) {
      RAN.incrementAndGet();
      return Mono.fromFuture(release).thenReturn("failed");
    }

    @RateLimited(key = "#user", limit = 3, window = "15m", name = "errors", countWhen = "#exception != null")
    public Flux<Integer> stream(String user, boolean fail) {
      return fail ? Flux.concat(Flux.just(1), Flux.error(new IllegalStateException("broken"))) : Flux.just(1, 2);
    }
  }

  private static long room(RateLimiter limiter, String key, String name, int limit) {
    return limiter.inspect(key, Policy.of(limit, Duration.ofMinutes(15)).withName(name)).remaining();
  }

  @Test
  void onlyTheOutcomesTheConditionNamesCount() {
    runner.run(context -> {
      Logins logins = context.getBean(Logins.class);
      RateLimiter limiter = context.getBean(RateLimiter.class);
      for (int i = 0; i < 5; i++) {
        assertThat(logins.login("ann", true).block(Duration.ofSeconds(5))).isEqualTo("welcome");
      }
      assertThat(room(limiter, "ann", "failures", 3)).as("successes give their unit back").isEqualTo(3);
      for (int i = 0; i < 3; i++) {
        assertThat(logins.login("ann", false).block(Duration.ofSeconds(5))).isEqualTo("failed");
      }
      assertThat(room(limiter, "ann", "failures", 3)).isZero();
      RAN.set(0);
      assertThatThrownBy(() -> logins.login("ann", true).block(Duration.ofSeconds(5)))
          .isInstanceOf(RateLimitExceededException.class);
      assertThat(RAN.get()).as("refused before it runs").isZero();
    });
  }

  @Test
  void subscriptionsInFlightAtOnceNeverPassBeyondTheLimit() {
    runner.run(context -> {
      Logins logins = context.getBean(Logins.class);
      RateLimiter limiter = context.getBean(RateLimiter.class);
      RAN.set(0);
      release = new CompletableFuture<>();
      List<CompletableFuture<String>> answers = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        answers.add(logins.held("bob").onErrorResume(RateLimitExceededException.class, e -> Mono.just("refused"))
            .toFuture());
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (answers.stream().filter(CompletableFuture::isDone).count() < 4 && System.nanoTime() < deadline) {
        Thread.sleep(5); // the four beyond the room are refused at once; the four admitted wait
      }
      assertThat(RAN.get()).as("ran: the room, none beyond").isEqualTo(4);
      release.complete(null);
      List<String> outcomes = new ArrayList<>();
      for (CompletableFuture<String> answer : answers) {
        outcomes.add(answer.get(10, TimeUnit.SECONDS));
      }
      assertThat(outcomes).filteredOn("failed"::equals).hasSize(4);
      assertThat(outcomes).filteredOn("refused"::equals).hasSize(4);
      assertThat(room(limiter, "bob", "held", 4)).isZero();
    });
  }

  @Test
  void aCancelledSubscriptionCounts() {
    runner.run(context -> {
      Logins logins = context.getBean(Logins.class);
      RateLimiter limiter = context.getBean(RateLimiter.class);
      release = new CompletableFuture<>();
      RAN.set(0);
      Disposable pending = logins.held("cy").subscribe();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (RAN.get() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      pending.dispose(); // the client went away: what ran counts
      deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (room(limiter, "cy", "held", 4) != 3 && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      release.complete(null);
      assertThat(room(limiter, "cy", "held", 4)).as("committed, not given back").isEqualTo(3);
    });
  }

  @Test
  void aFluxCountsByTheErrorItEndsWith() {
    runner.run(context -> {
      Logins logins = context.getBean(Logins.class);
      RateLimiter limiter = context.getBean(RateLimiter.class);
      assertThat(logins.stream("dee", false).collectList().block(Duration.ofSeconds(5))).containsExactly(1, 2);
      assertThat(room(limiter, "dee", "errors", 3)).as("completed: given back").isEqualTo(3);
      assertThatThrownBy(() -> logins.stream("dee", true).collectList().block(Duration.ofSeconds(5)))
          .hasMessageContaining("broken");
      assertThat(room(limiter, "dee", "errors", 3)).as("the error counted").isEqualTo(2);
    });
  }
}

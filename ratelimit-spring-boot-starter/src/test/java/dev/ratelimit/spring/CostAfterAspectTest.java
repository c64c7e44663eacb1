package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.annotation.RateLimitExceededException;
import dev.ratelimit.annotation.RateLimited;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;

/**
 * {@code @RateLimited(costAfter = ...)}: the cost is an estimate reserved before the call, and the
 * call's outcome gives the actual cost the reservation is committed at: the difference charged
 * when higher (a debt later calls pay), the surplus given back when lower, all of it at 0.
 */
class CostAfterAspectTest {
  private static final ManualClock CLOCK = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
  private static final Policy TOKENS = Policy.of(1_000, Duration.ofHours(1), Algorithm.FIXED_WINDOW)
      .withName("tokens");

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, AopAutoConfiguration.class))
      .withPropertyValues("ratelimit.backend=memory").withUserConfiguration(Beans.class);

  @Configuration(proxyBeanMethods = false)
  static class Beans {
    @Bean
    InstantSource clock() {
      return CLOCK;
    }

    @Bean
    Completions completions() {
      return new Completions();
    }
  }

  /** What a completion used. */
  public record Usage(long tokens) {}

  public static class Completions {
    /** 100 tokens reserved per call, the usage the answer reports committed. */
    @RateLimited(key = "#user", limit = 1_000, window = "1h", algorithm = Algorithm.FIXED_WINDOW, name = "tokens",
        cost = "100", costAfter = "#result.tokens")
    public Usage complete(String user, long tokens) {
      return new Usage(tokens);
    }

    @RateLimited(key = "#user", limit = 1_000, window = "1h", algorithm = Algorithm.FIXED_WINDOW, name = "tokens",
        cost = "100", costAfter = "#result.tokens")
    public Mono<Usage> completeLater(String user, long tokens) {
      return Mono.just(new Usage(tokens));
    }

    /** Only failures count, each at its reported weight. */
    @RateLimited(key = "#user", limit = 1_000, window = "1h", algorithm = Algorithm.FIXED_WINDOW, name = "tokens",
        cost = "100", countWhen = "#result.tokens > 500", costAfter = "#result.tokens")
    public Usage onlyLarge(String user, long tokens) {
      return new Usage(tokens);
    }
  }

  private static long room(RateLimiter limiter, String user) {
    return limiter.inspect(user, TOKENS).remaining();
  }

  @Test
  void theActualCostIsCommittedLowerOrHigherThanTheEstimate() {
    runner.run(context -> {
      Completions completions = context.getBean(Completions.class);
      RateLimiter limiter = context.getBean(RateLimiter.class);
      completions.complete("ann", 30);
      assertThat(room(limiter, "ann")).as("70 of the estimate given back").isEqualTo(970);
      completions.complete("ann", 250);
      assertThat(room(limiter, "ann")).as("150 beyond the estimate charged").isEqualTo(720);
      completions.complete("ann", 0);
      assertThat(room(limiter, "ann")).as("nothing used: all given back").isEqualTo(720);
      completions.completeLater("ann", 20).block(Duration.ofSeconds(5));
      assertThat(room(limiter, "ann")).as("a Mono's value").isEqualTo(700);
    });
  }

  @Test
  void theEstimateDecidesAdmissionAndADebtIsPaidByLaterCalls() {
    runner.run(context -> {
      Completions completions = context.getBean(Completions.class);
      RateLimiter limiter = context.getBean(RateLimiter.class);
      completions.complete("bob", 950);
      assertThat(room(limiter, "bob")).isEqualTo(50);
      assertThatThrownBy(() -> completions.complete("bob", 1)).as("no room for the estimate of 100")
          .isInstanceOf(RateLimitExceededException.class);
      assertThat(room(limiter, "bob")).as("a refused call takes nothing").isEqualTo(50);

      completions.complete("cy", 5_000); // the work was done: charged whatever the limit
      assertThat(room(limiter, "cy")).isZero();
      CLOCK.advance(Duration.ofHours(1));
      assertThat(room(limiter, "cy")).as("a fixed window's debt ends with its window").isEqualTo(1_000);
    });
  }

  @Test
  void countWhenDecidesWhetherCostAfterCounts() {
    runner.run(context -> {
      Completions completions = context.getBean(Completions.class);
      RateLimiter limiter = context.getBean(RateLimiter.class);
      completions.onlyLarge("dee", 400);
      assertThat(room(limiter, "dee")).as("not counted: given back").isEqualTo(1_000);
      completions.onlyLarge("dee", 600);
      assertThat(room(limiter, "dee")).isEqualTo(400);
    });
  }

  @Test
  void aCostAfterThatIsNoCostChargesTheEstimateAndThrows() {
    runner.run(context -> {
      Completions completions = context.getBean(Completions.class);
      RateLimiter limiter = context.getBean(RateLimiter.class);
      assertThatThrownBy(() -> completions.complete("eve", -5)).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("costAfter: cost expression '#result.tokens' gave -5, not a number from 0 to "
              + (1L << 52) + "; the estimate was charged");
      assertThat(room(limiter, "eve")).isEqualTo(900);
    });
  }

  public static class ReadsResponse {
    @RateLimited(limit = 10, window = "1m", costAfter = "#response.status")
    public Usage run() {
      return new Usage(1);
    }
  }

  @Test
  void startUpRefusesACostAfterReadingWhatACallHasNot() {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, AopAutoConfiguration.class))
        .withPropertyValues("ratelimit.backend=memory").withBean(ReadsResponse.class).run(context -> {
          assertThat(context).hasFailed();
          StringBuilder all = new StringBuilder();
          for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
            all.append(t.getMessage()).append('\n');
          }
          assertThat(all.toString()).contains("costAfter: cost expression '#response.status' reads #response, an"
              + " unknown variable");
        });
  }
}

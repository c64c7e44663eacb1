package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.ManualClock;
import dev.ratelimit.annotation.RateLimitExceededException;
import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.annotation.RateLimited.Mode;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code @RateLimited(fallbackMethod = ...)}: called instead of throwing, with the arguments and
 * optionally the exception, also when a {@code WAIT} gives up; what start-up refuses (over HTTP:
 * {@link FallbackStarterTest}).
 */
class FallbackMethodTest {
  private static final ManualClock CLOCK = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
  static final AtomicInteger RAN = new AtomicInteger();

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, AopAutoConfiguration.class))
      .withPropertyValues("ratelimit.backend=memory");

  @Configuration(proxyBeanMethods = false)
  static class Beans {
    @Bean
    InstantSource clock() {
      return CLOCK;
    }

    @Bean
    Quotes quotes() {
      return new Quotes();
    }
  }

  public static class Quotes {
    @RateLimited(key = "#symbol", limit = 1, window = "1m", fallbackMethod = "stale")
    public String quote(String symbol, int digits) {
      RAN.incrementAndGet();
      return "fresh " + symbol + "/" + digits;
    }

    /** Both forms exist: the one taking the exception wins. */
    String stale(String symbol, int digits) {
      return "plain";
    }

    private String stale(String symbol, int digits, RateLimitExceededException e) {
      return "stale " + symbol + "/" + digits + " (" + e.decision().policy().name() + ", retry after "
          + e.decision().retryAfter().toSeconds() + " s)";
    }

    @RateLimited(key = "#symbol", limit = 1, window = "1m", name = "plain", fallbackMethod = "none")
    public Integer count(String symbol) {
      return 1;
    }

    static Integer none(String symbol, Exception e) {
      return 0;
    }

    /** A wait longer than maxWait gives up at once: then the fallback answers. */
    @RateLimited(key = "#symbol", limit = 1, window = "1m", name = "waiting", mode = Mode.WAIT, maxWait = "1s",
        fallbackMethod = "gaveUp")
    public String waiting(String symbol) {
      return "waited";
    }

    String gaveUp(String symbol) {
      return "gave up";
    }

    @RateLimited(key = "#symbol", limit = 1, window = "1m", name = "throwing", fallbackMethod = "rethrow")
    public String throwing(String symbol) {
      return "ok";
    }

    String rethrow(String symbol, RateLimitExceededException e) {
      throw new IllegalStateException("no quote for " + symbol, e);
    }
  }

  @Test
  void theFallbackAnswersARefusedCallWithItsArgumentsAndTheException() {
    runner.withUserConfiguration(Beans.class).run(context -> {
      Quotes quotes = context.getBean(Quotes.class);
      RAN.set(0);
      assertThat(quotes.quote("ACME", 2)).isEqualTo("fresh ACME/2");
      assertThat(quotes.quote("ACME", 3)).isEqualTo("stale ACME/3 (Quotes.quote, retry after 60 s)");
      assertThat(RAN).as("the method did not run").hasValue(1);
      assertThat(quotes.quote("OTHER", 2)).isEqualTo("fresh OTHER/2");
      assertThat(quotes.count("x")).isEqualTo(1);
      assertThat(quotes.count("x")).as("a static one taking a supertype").isZero();
    });
  }

  @Test
  void aWaitThatGivesUpCallsTheFallback() {
    runner.withUserConfiguration(Beans.class).run(context -> {
      Quotes quotes = context.getBean(Quotes.class);
      assertThat(quotes.waiting("w")).isEqualTo("waited");
      assertThat(quotes.waiting("w")).as("60 s to wait, 1 s allowed").isEqualTo("gave up");
    });
  }

  @Test
  void whatTheFallbackThrowsIsThrown() {
    runner.withUserConfiguration(Beans.class).run(context -> {
      Quotes quotes = context.getBean(Quotes.class);
      quotes.throwing("t");
      assertThatThrownBy(() -> quotes.throwing("t")).isInstanceOf(IllegalStateException.class)
          .hasMessage("no quote for t").hasCauseInstanceOf(RateLimitExceededException.class);
    });
  }

  @Test
  void startUpRefusesAFallbackThatCannotAnswer() {
    assertThat(startUpFailure(Missing.class)).contains("@RateLimited on " + Missing.class.getName() + ".get:"
        + " fallbackMethod 'nope' names no method of " + Missing.class.getName() + " (or its superclasses) that can"
        + " answer a refused call; expected String nope(String, int) or String nope(String, int,"
        + " RateLimitExceededException e), any visibility, returning String or a subtype");
    assertThat(startUpFailure(WrongParameters.class)).contains("fallbackMethod 'other' names no method")
        .contains("; found String other(String), String other(int, String)");
    assertThat(startUpFailure(WrongReturn.class)).contains("fallbackMethod 'other'")
        .contains("found Object other(String)");
    assertThat(startUpFailure(WrongException.class)).contains("found String other(String, IllegalStateException)");
    assertThat(startUpFailure(TwoNames.class)).contains("names two fallback methods, 'a' and 'b'");
  }

  private String startUpFailure(Class<?> bean) {
    StringBuilder all = new StringBuilder();
    runner.withBean(bean).run(context -> {
      assertThat(context).hasFailed();
      for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
        all.append(t.getMessage()).append('\n');
      }
    });
    return all.toString();
  }

  public static class Missing {
    @RateLimited(limit = 1, window = "1m", fallbackMethod = "nope")
    public String get(String a, int b) {
      return a;
    }
  }

  public static class WrongParameters {
    @RateLimited(limit = 1, window = "1m", fallbackMethod = "other")
    public String get(String a, int b) {
      return a;
    }

    String other(String a) {
      return a;
    }

    String other(int b, String a) {
      return a;
    }
  }

  public static class WrongReturn {
    @RateLimited(limit = 1, window = "1m", fallbackMethod = "other")
    public String get(String a) {
      return a;
    }

    Object other(String a) {
      return a;
    }
  }

  public static class WrongException {
    @RateLimited(limit = 1, window = "1m", fallbackMethod = "other")
    public String get(String a) {
      return a;
    }

    String other(String a, IllegalStateException e) {
      return a;
    }
  }

  public static class TwoNames {
    @RateLimited(limit = 1, window = "1m", name = "one", fallbackMethod = "a")
    @RateLimited(limit = 2, window = "1m", name = "two", fallbackMethod = "b")
    public String get() {
      return "x";
    }

    String a() {
      return "a";
    }

    String b() {
      return "b";
    }
  }
}

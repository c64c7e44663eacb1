package dev.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.http.RateLimitRule;
import dev.ratelimit.tck.docs.DocPage;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A rule's {@code cost-after}, over HTTP in Jetty: its {@code cost} reserved as the estimate
 * before the request, committed at what the response's header says after it (the surplus given
 * back, a larger cost charged beyond the limit), the estimate kept when the header is absent or no
 * number.
 */
class CostAfterFilterTest {
  private final ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
  private final RateLimiter limiter = RateLimiter.builder().clock(clock).build();
  private final Policy tokens = Policy.of(100, Duration.ofHours(1)).withName("tokens");
  private TestServer server;

  @TempDir
  Path dir;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
    limiter.close();
  }

  /** Answers {@code ?status=} (200 by default) with {@code X-Tokens-Used: ?used=} when given. */
  static final class Upstream extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) {
      String used = request.getParameter("used");
      if (used != null) {
        response.setHeader("X-Tokens-Used", used);
      }
      String status = request.getParameter("status");
      response.setStatus(status == null ? 200 : Integer.parseInt(status));
    }
  }

  private void serve(RateLimitRule rule) {
    RateLimitFilter filter = RateLimitFilter.builder(limiter).rule(rule).build();
    server = TestServer.start(context -> {
      context.addServlet(new ServletHolder(new Upstream()), "/v1/completions");
      context.addFilter(new FilterHolder(filter), "/*", EnumSet.of(DispatcherType.REQUEST));
    });
  }

  private RateLimitRule.Builder rule() {
    return RateLimitRule.builder("completions").path("/v1/completions").policy(tokens).cost("10")
        .costAfter("#response.headers['x-tokens-used']");
  }

  private long room() {
    return limiter.inspect("completions:127.0.0.1", tokens).remaining();
  }

  @Test
  void theResponsesHeaderSettlesTheEstimate() {
    serve(rule().build());
    assertThat(server.get("/v1/completions?used=3").statusCode()).isEqualTo(200);
    assertThat(room()).as("10 reserved, 3 used: 7 given back").isEqualTo(97);
    assertThat(server.get("/v1/completions?used=0").statusCode()).isEqualTo(200);
    assertThat(room()).as("0 used: all given back").isEqualTo(97);
    assertThat(server.get("/v1/completions?used=25").statusCode()).isEqualTo(200);
    assertThat(room()).as("25 used: 15 charged beyond the estimate").isEqualTo(72);
    assertThat(server.get("/v1/completions?used=2.5").statusCode()).isEqualTo(200);
    assertThat(room()).as("a fraction is rounded up").isEqualTo(69);
  }

  @Test
  void anAbsentOrBadValueKeepsTheEstimateAndSaysSo() {
    try (RateLimitFilterTest.LogCapture log = new RateLimitFilterTest.LogCapture()) {
      serve(rule().build());
      assertThat(server.get("/v1/completions").statusCode()).isEqualTo(200);
      assertThat(room()).as("no header: the estimate").isEqualTo(90);
      assertThat(server.get("/v1/completions?used=lots").statusCode()).isEqualTo(200);
      assertThat(server.get("/v1/completions?used=-4").statusCode()).isEqualTo(200);
      assertThat(room()).as("not a number, negative: the estimate").isEqualTo(70);
      assertThat(log.messages()).filteredOn(m -> m.contains("cost-after")).first().asString()
          .contains("rule 'completions': cost-after: cost expression '#response.headers['x-tokens-used']'")
          .contains("not a number from 0 to " + (1L << 52));
    }
  }

  @Test
  void theEstimateIsRefusedAsACheckOfItWouldBeAndADebtIsPaidByLaterRequests() {
    serve(rule().build());
    assertThat(server.get("/v1/completions?used=95").statusCode()).isEqualTo(200);
    assertThat(room()).isEqualTo(5);
    assertThat(server.get("/v1/completions?used=1").statusCode()).as("no room for the estimate").isEqualTo(429);
    assertThat(room()).as("a refused request takes nothing").isEqualTo(5);
    limiter.reset("completions:127.0.0.1", tokens);
    assertThat(server.get("/v1/completions?used=150").statusCode()).isEqualTo(200);
    assertThat(room()).isZero();
    clock.advance(Duration.ofMinutes(30)); // half the hour's 100 back, all of it owed
    assertThat(server.get("/v1/completions?used=1").statusCode()).as("the debt is paid first").isEqualTo(429);
    clock.advance(Duration.ofMinutes(36)); // 110 back in all: 10 beyond the debt
    assertThat(server.get("/v1/completions?used=1").statusCode()).isEqualTo(200);
  }

  @Test
  void withCountWhenTheConditionDecidesWhetherAndCostAfterHowMuch() {
    serve(rule().countWhen("#response.status < 500").build());
    assertThat(server.get("/v1/completions?used=40&status=503").statusCode()).isEqualTo(503);
    assertThat(room()).as("not counted: all given back").isEqualTo(100);
    assertThat(server.get("/v1/completions?used=40").statusCode()).isEqualTo(200);
    assertThat(room()).isEqualTo(60);
  }

  /** The example of docs/servlet-filter.md, from the file; and a bad cost-after there, named by its property. */
  @Test
  void thePagesExampleFromTheFile() throws Exception {
    Path file = Files.writeString(dir.resolve("ratelimit.properties"),
        DocPage.read("docs/servlet-filter.md").block("properties", "cost-after"));
    assertThat(RateLimitConfig.load(file.toString()).rules().get(0).costAfter())
        .isEqualTo("#response.headers['X-Tokens-Used']");
    Path bad = Files.writeString(dir.resolve("bad.properties"), Files.readString(file)
        .replace("#response.headers", "#response.header"));
    assertThatThrownBy(() -> RateLimitConfig.load(bad.toString())).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ratelimit.rules[0].cost-after: rule 'completions': cost-after expression"
            + " '#response.header['X-Tokens-Used']' reads 'header' of #response, which has no such property;"
            + " the response's properties are status and headers");
    server = TestServer.start(context -> {
      context.addServlet(new ServletHolder(new Upstream()), "/v1/completions");
      FilterHolder holder = new FilterHolder(RateLimitFilter.class);
      holder.setInitParameter(RateLimitFilter.CONFIG_PARAM, file.toString());
      context.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST));
    });
    assertThat(server.get("/v1/completions?used=99000", "X-Api-Key", "k1").statusCode()).isEqualTo(200);
    assertThat(server.get("/v1/completions?used=10", "X-Api-Key", "k1").statusCode())
        .as("1,000 left: no room for the 2,000 estimate").isEqualTo(429);
    assertThat(server.get("/v1/completions?used=10", "X-Api-Key", "k2").statusCode()).isEqualTo(200);
  }

  @Test
  void costAfterIsCheckedWhenTheRuleIsBuiltAndNeedsReservations() {
    assertThatThrownBy(() -> rule().costAfter("#result.tokens").build()).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("rule 'completions': cost-after expression '#result.tokens' reads #result, an"
            + " unknown variable");
    assertThatThrownBy(() -> rule().cost("#response.status").costAfter(null).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("rule 'completions': cost expression '#response.status' reads #response");
    dev.ratelimit.spi.Backend plain = new dev.ratelimit.spi.Backend() {
      @Override
      public <R> R execute(dev.ratelimit.spi.Command<R> command) {
        throw new UnsupportedOperationException();
      }

      @Override
      public void close() {}
    };
    try (RateLimiter without = RateLimiter.builder().backend(plain).build()) {
      assertThatThrownBy(() -> RateLimitFilter.builder(without).rule(rule().build()).build())
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("rule 'completions' has cost-after, which reserves its cost before the request");
    }
  }
}

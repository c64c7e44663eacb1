package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.ManualClock;
import dev.ratelimit.tck.docs.DocPage;
import dev.ratelimit.tck.http.StructuredFields;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * {@code @RateLimited(fallbackMethod = ...)} in a real Tomcat: the quote controller of README.md and
 * docs/spring-boot.md, whose code is {@code FallbackPageExamples.java}.
 */
class FallbackStarterTest {
  private static ConfigurableApplicationContext app;

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(QuoteController.class)
  static class App {
    @Bean
    InstantSource clock() {
      return ManualClock.at(Instant.ofEpochSecond(1_700_000_000L)); // the waits the fallback tells, exactly
    }
  }

  @BeforeAll
  static void start() {
    app = new SpringApplicationBuilder(App.class).properties("server.port=0", "ratelimit.backend=memory").run();
  }

  @AfterAll
  static void stop() {
    app.close();
  }

  private static HttpResponse<String> get(String path) throws Exception {
    return AppHttp.get(app, path);
  }

  @Test
  void thePagesShowTheCodeThisTestRuns() {
    for (String name : List.of("docs/spring-boot.md")) {
      DocPage page = DocPage.read(name);
      page.assertRunBy(page.block("java", "class QuoteController"),
          "src/test/java/dev/ratelimit/spring/FallbackPageExamples.java");
    }
  }

  @Test
  void aRefusedCallIsAnsweredByTheFallbackNotA429() throws Exception {
    assertThat(get("/quotes/ACME").body()).isEqualTo("fresh ACME");
    assertThat(get("/quotes/ACME").body()).isEqualTo("fresh ACME");
    HttpResponse<String> refused = get("/quotes/ACME");
    assertThat(refused.statusCode()).isEqualTo(200);
    assertThat(refused.body()).isEqualTo("cached ACME, fresh again in 30 s");
    assertThat(StructuredFields.parseList(refused.headers().firstValue("RateLimit").orElseThrow()).get(0).integer("r"))
        .as("the limit headers say so").isZero();
    assertThat(refused.headers().firstValue("Retry-After")).as("not a denial's answer").isEmpty();
  }
}

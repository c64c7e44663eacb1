package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.ManualClock;
import dev.ratelimit.annotation.RateLimited;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.time.InstantSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A filter rule and a {@code @RateLimited} controller on one request, in a real Tomcat: the limit
 * headers list both policies (the annotation's used to replace the filter's, telling a client
 * quota remained when the filter had none left).
 */
class FilterAndAnnotationHeadersTest {
  private static ConfigurableApplicationContext app;

  @RestController
  static class Both {
    @GetMapping("/both/a")
    @RateLimited(key = "'k'", limit = 5, window = "1h", name = "both-ann")
    String both() {
      return "both";
    }

    @GetMapping("/wide/a")
    @RateLimited(key = "'k'", limit = 2, window = "1h", name = "wide-ann")
    String wide() {
      return "wide";
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(Both.class)
  static class App {
    @Bean
    InstantSource clock() {
      return ManualClock.at(Instant.parse("2030-01-01T00:00:00Z"));
    }
  }

  @BeforeAll
  static void start() {
    app = new SpringApplicationBuilder(App.class).properties(
        "server.port=0",
        "ratelimit.backend=memory",
        "ratelimit.headers.legacy=true",
        "ratelimit.policies.both-filter.limit=2", "ratelimit.policies.both-filter.window=1h",
        "ratelimit.policies.wide-filter.limit=5", "ratelimit.policies.wide-filter.window=1h",
        "ratelimit.filter.rules[0].name=both", "ratelimit.filter.rules[0].paths=/both/**",
        "ratelimit.filter.rules[0].policies=both-filter",
        "ratelimit.filter.rules[1].name=wide", "ratelimit.filter.rules[1].paths=/wide/**",
        "ratelimit.filter.rules[1].policies=wide-filter").run();
  }

  @AfterAll
  static void stop() {
    app.close();
  }

  private static HttpResponse<String> get(String path) throws Exception {
    return AppHttp.get(app, path);
  }

  @Test
  void bothPoliciesAppearSoNoClientIsToldQuotaRemainsWhenNoneDoes() throws Exception {
    // GCRA: the filter's 2 an hour, one unit back every 1800 s; the annotation's 5, every 720 s
    HttpResponse<String> first = get("/both/a");
    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.headers().allValues("RateLimit-Policy"))
        .containsExactly("\"both-filter\";q=2;w=3600, \"both-ann\";q=5;w=3600");
    assertThat(first.headers().allValues("RateLimit"))
        .containsExactly("\"both-filter\";r=1;t=1800, \"both-ann\";r=4;t=720");

    HttpResponse<String> second = get("/both/a");
    assertThat(second.statusCode()).isEqualTo(200);
    assertThat(second.headers().allValues("RateLimit"))
        .containsExactly("\"both-filter\";r=0;t=3600, \"both-ann\";r=3;t=1440");
    // the legacy fields describe the most restrictive: the filter's, with nothing left
    assertThat(second.headers().firstValue("X-RateLimit-Limit")).hasValue("2");
    assertThat(second.headers().firstValue("X-RateLimit-Remaining")).hasValue("0");

    HttpResponse<String> third = get("/both/a");
    assertThat(third.statusCode()).isEqualTo(429);
    assertThat(third.headers().firstValue("Retry-After")).hasValue("1800");
    assertThat(third.headers().allValues("RateLimit")).containsExactly("\"both-filter\";r=0;t=1800");
  }

  @Test
  void aDenialByTheAnnotationListsTheFiltersPolicyAndWaitsForTheDenyingOne() throws Exception {
    assertThat(get("/wide/a").statusCode()).isEqualTo(200);
    assertThat(get("/wide/a").statusCode()).isEqualTo(200);
    HttpResponse<String> denied = get("/wide/a");
    assertThat(denied.statusCode()).isEqualTo(429);
    // the filter allowed (5 an hour, 3 left) and the annotation denied (2 an hour): its wait, 1800 s
    assertThat(denied.headers().allValues("Retry-After")).containsExactly("1800");
    assertThat(denied.headers().allValues("RateLimit-Policy"))
        .containsExactly("\"wide-filter\";q=5;w=3600, \"wide-ann\";q=2;w=3600");
    assertThat(denied.headers().allValues("RateLimit"))
        .containsExactly("\"wide-filter\";r=2;t=1800, \"wide-ann\";r=0;t=1800");
    assertThat(denied.headers().firstValue("X-RateLimit-Limit")).hasValue("2");
    assertThat(denied.headers().firstValue("X-RateLimit-Remaining")).hasValue("0");
    // without ratelimit.denied-response, the default: a problem body
    assertThat(denied.headers().firstValue("Content-Type")).hasValueSatisfying(
        type -> assertThat(type).startsWith("application/problem+json"));
    assertThat(denied.body()).contains("\"violated-policies\":[\"wide-ann\"]");
  }
}

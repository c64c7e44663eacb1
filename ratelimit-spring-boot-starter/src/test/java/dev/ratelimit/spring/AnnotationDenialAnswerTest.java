package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.ManualClock;
import dev.ratelimit.annotation.RateLimitExceededException;
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
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Who answers a {@code @RateLimited} controller's refusal, in a real Tomcat: the starter's 429
 * before the application's catch-all advice, also when the refusal arrives as the cause of another
 * exception; the controller's own {@code @ExceptionHandler} when it has one; a missing key under
 * {@code missing-key: reject} as a 400.
 */
class AnnotationDenialAnswerTest {
  private static ConfigurableApplicationContext app;

  @Component
  static class Partner {
    @RateLimited(key = "'partner'", limit = 1, window = "1h", name = "partner")
    String call() {
      return "partner";
    }
  }

  @RestController
  static class Plain {
    private final Partner partner;

    Plain(Partner partner) {
      this.partner = partner;
    }

    @GetMapping("/plain")
    @RateLimited(key = "'plain'", limit = 1, window = "1h", name = "plain")
    String plain() {
      return "plain";
    }

    @GetMapping("/wrapped")
    String wrapped() {
      try {
        return partner.call();
      } catch (RateLimitExceededException e) {
        throw new IllegalStateException("the partner refused", e);
      }
    }

    @GetMapping("/keyed")
    @RateLimited(key = "#user", limit = 1, window = "1h", name = "keyed")
    String keyed(@RequestParam(required = false) String user) {
      return "keyed";
    }
  }

  @RestController
  static class OwnHandler {
    @GetMapping("/own")
    @RateLimited(key = "'own'", limit = 1, window = "1h", name = "own")
    String own() {
      return "own";
    }

    @ExceptionHandler(RateLimitExceededException.class)
    ResponseEntity<String> busy(RateLimitExceededException e) {
      return ResponseEntity.status(503).body("busy: " + e.decision().policy().name());
    }
  }

  @RestControllerAdvice
  static class CatchAll {
    @ExceptionHandler(Exception.class)
    ResponseEntity<String> any(Exception e) {
      return ResponseEntity.status(500).body("caught");
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import({Partner.class, Plain.class, OwnHandler.class, CatchAll.class})
  static class App {
    @Bean
    InstantSource clock() {
      return ManualClock.at(Instant.parse("2030-01-01T00:00:00Z"));
    }
  }

  @BeforeAll
  static void start() {
    app = new SpringApplicationBuilder(App.class).properties(
        "server.port=0", "ratelimit.backend=memory", "ratelimit.missing-key=reject").run();
  }

  @AfterAll
  static void stop() {
    app.close();
  }

  private static HttpResponse<String> get(String path) throws Exception {
    return AppHttp.get(app, path);
  }

  @Test
  void theStartersAnswerComesBeforeTheApplicationsCatchAll() throws Exception {
    assertThat(get("/plain").statusCode()).isEqualTo(200);
    HttpResponse<String> refused = get("/plain");
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(refused.headers().firstValue("Retry-After")).hasValue("3600");
    assertThat(refused.headers().firstValue("RateLimit")).hasValue("\"plain\";r=0;t=3600");
    assertThat(refused.body()).contains("\"status\":429");
  }

  @Test
  void aRefusalCarriedAsACauseIsStillA429() throws Exception {
    assertThat(get("/wrapped").statusCode()).isEqualTo(200);
    HttpResponse<String> refused = get("/wrapped");
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(refused.headers().firstValue("RateLimit")).hasValue("\"partner\";r=0;t=3600");
  }

  @Test
  void theControllersOwnHandlerAnswersItsRefusals() throws Exception {
    assertThat(get("/own").statusCode()).isEqualTo(200);
    HttpResponse<String> refused = get("/own");
    assertThat(refused.statusCode()).isEqualTo(503);
    assertThat(refused.body()).isEqualTo("busy: own");
  }

  @Test
  void aMissingKeyIsA400() throws Exception {
    HttpResponse<String> refused = get("/keyed");
    assertThat(refused.statusCode()).isEqualTo(400);
    assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(refused.body()).contains("the request has no rate-limit key");
    assertThat(get("/keyed?user=a").statusCode()).isEqualTo(200);
  }
}

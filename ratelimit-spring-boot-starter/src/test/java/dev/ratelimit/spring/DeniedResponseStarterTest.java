package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.tck.docs.DocPage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The configured denied response of the starter in a real Tomcat, as the YAML of docs/spring-boot.md
 * (whose first lines are README.md's example) sets it: global for the filter and a
 * {@code @RateLimited} controller, overridden by a filter rule.
 */
class DeniedResponseStarterTest {
  private static final String PAGE = "docs/spring-boot.md";
  private static ConfigurableApplicationContext app;

  @RestController
  static class Endpoints {
    @GetMapping("/v1/things")
    String things() {
      return "things";
    }

    @GetMapping("/annotated")
    @RateLimited(key = "'k'", limit = 1, window = "1m", name = "annotated")
    String annotated() {
      return "annotated";
    }

    @GetMapping("/v2/things")
    String v2() {
      return "v2";
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(Endpoints.class)
  static class App {
    /**
     * The limiter's clock, still: on the system clock a policy of 100 a minute gains a request every
     * 0.6 s, so on a busy machine the 101st request could pass.
     */
    @org.springframework.context.annotation.Bean
    dev.ratelimit.ManualClock clock() {
      return dev.ratelimit.ManualClock.at(java.time.Instant.ofEpochSecond(1_700_000_000L));
    }
  }

  static String pageYaml() {
    return DocPage.read(PAGE).block("yaml", "denied-response:");
  }

  @BeforeAll
  static void start() {
    app = new SpringApplicationBuilder(App.class)
        .initializers(context -> {
          try {
            new YamlPropertySourceLoader().load(PAGE, new ByteArrayResource(pageYaml().getBytes(StandardCharsets.UTF_8)))
                .forEach(context.getEnvironment().getPropertySources()::addLast);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        })
        .properties("server.port=0", "ratelimit.backend=memory")
        .run();
  }

  @AfterAll
  static void stop() {
    app.close();
  }

  private static HttpResponse<String> get(String path) throws Exception {
    return AppHttp.get(app, path);
  }

  @Test
  void readmesExampleIsThePagesFirstLines() {
    String readme = DocPage.read("README.md").block("yaml", "denied-response:");
    assertThat(pageYaml()).startsWith(readme);
  }

  @Test
  void theGlobalResponseAnswersAnAnnotatedControllersDenial() throws Exception {
    assertThat(get("/annotated").statusCode()).isEqualTo(200);
    HttpResponse<String> denied = get("/annotated");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/json");
    assertThat(denied.headers().firstValue("X-Error-Code")).hasValue("RATE_LIMITED");
    assertThat(denied.headers().firstValue("Retry-After")).hasValue("60");
    assertThat(denied.headers().firstValue("RateLimit")).hasValue("\"annotated\";r=0;t=60");
    assertThat(denied.body()).isEqualTo("{\"error\":\"rate_limited\",\"policy\":\"annotated\",\"retry_in\":60}");
  }

  @Test
  void theGlobalResponseAnswersAFilterRulesDenial() throws Exception {
    for (int i = 0; i < 100; i++) {
      assertThat(get("/v2/things").statusCode()).isEqualTo(200);
    }
    HttpResponse<String> denied = get("/v2/things");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/json");
    assertThat(denied.headers().firstValue("X-Error-Code")).hasValue("RATE_LIMITED");
    assertThat(denied.body()).matches("\\{\"error\":\"rate_limited\",\"policy\":\"v2\",\"retry_in\":1}");
  }

  @Test
  void aRulesResponseIsOverTheGlobalOne() throws Exception {
    for (int i = 0; i < 10; i++) {
      assertThat(get("/v1/things").statusCode()).isEqualTo(200);
    }
    HttpResponse<String> denied = get("/v1/things");
    assertThat(denied.statusCode()).isEqualTo(503);
    assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/json");
    assertThat(denied.headers().firstValue("X-Error-Code")).hasValue("RATE_LIMITED");
    assertThat(denied.headers().firstValue("Retry-After")).hasValue("6");
    assertThat(denied.body()).isEqualTo("{\"error\":\"rate_limited\",\"policy\":\"v1\",\"retry_in\":6}");
  }
}

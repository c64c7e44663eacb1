package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.tck.docs.DocPage;
import dev.ratelimit.tck.http.StructuredFields;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The filter rules' {@code count-when} and {@code skip-when} of the starter in a real Tomcat, as the
 * YAML of docs/spring-boot.md sets them (the test's client is a trusted proxy, to speak for
 * 10.0.0.7).
 */
class FilterConditionsStarterTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final String PAGE = "docs/spring-boot.md";
  private static ConfigurableApplicationContext app;

  @RestController
  static class Endpoints {
    @PostMapping("/login")
    ResponseEntity<String> login(@RequestParam String password) {
      return "right".equals(password) ? ResponseEntity.ok("welcome") : ResponseEntity.status(401).body("no");
    }

    @GetMapping("/v1/completions")
    ResponseEntity<String> complete(@RequestParam String used) {
      return ResponseEntity.ok().header("X-Tokens-Used", used).body("done");
    }

    @GetMapping({"/health", "/orders"})
    String ok() {
      return "ok";
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(Endpoints.class)
  static class App {}

  static String pageYaml() {
    return DocPage.read(PAGE).block("yaml", "count-when");
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
        .properties("server.port=0", "ratelimit.backend=memory", "ratelimit.trusted-proxies=127.0.0.1/32")
        .run();
  }

  @AfterAll
  static void stop() {
    app.close();
  }

  private static HttpResponse<String> send(String method, String path, String... headers) throws Exception {
    int port = ((WebServerApplicationContext) app).getWebServer().getPort();
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .method(method, HttpRequest.BodyPublishers.noBody());
    for (int i = 0; i < headers.length; i += 2) {
      request.header(headers[i], headers[i + 1]);
    }
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void onlyFailedLoginsCount() throws Exception {
    String client = "192.0.2.1";
    for (int i = 0; i < 10; i++) {
      assertThat(send("POST", "/login?password=right", "X-Forwarded-For", client).statusCode()).isEqualTo(200);
    }
    for (int i = 0; i < 5; i++) {
      assertThat(send("POST", "/login?password=wrong", "X-Forwarded-For", client).statusCode()).isEqualTo(401);
    }
    HttpResponse<String> locked = send("POST", "/login?password=right", "X-Forwarded-For", client);
    assertThat(locked.statusCode()).as("five failures: refused, the right password too").isEqualTo(429);
    assertThat(locked.body()).contains("\"failed-logins\"");
    assertThat(send("POST", "/login?password=right", "X-Forwarded-For", "192.0.2.2").statusCode())
        .as("another client").isEqualTo(200);
  }

  @Test
  void healthChecksAndTheInternalCallerAreLeftOut() throws Exception {
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> health = send("GET", "/health", "X-Forwarded-For", "198.51.100.1");
      assertThat(health.statusCode()).isEqualTo(200);
      assertThat(health.headers().firstValue("RateLimit")).isEmpty();
      assertThat(send("GET", "/orders", "X-Forwarded-For", "10.0.0.7").headers().firstValue("RateLimit")).isEmpty();
    }
    HttpResponse<String> counted = send("GET", "/orders", "X-Forwarded-For", "198.51.100.1");
    assertThat(StructuredFields.parseList(counted.headers().firstValue("RateLimit").orElseThrow()).get(0).integer("r"))
        .as("the health checks counted nothing").isEqualTo(99);
  }

  @Test
  void costAfterSettlesTheEstimateAtWhatTheResponseReports() throws Exception {
    HttpResponse<String> first = send("GET", "/v1/completions?used=500", "X-Api-Key", "key-1");
    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(room(first)).as("the estimate held while the request ran").isEqualTo(98_000);
    HttpResponse<String> second = send("GET", "/v1/completions?used=9000", "X-Api-Key", "key-1");
    assertThat(room(second)).as("the first settled at 500").isEqualTo(97_500);
    HttpResponse<String> third = send("GET", "/v1/completions?used=1", "X-Api-Key", "key-1");
    assertThat(room(third)).as("the second charged 9,000, beyond its estimate").isEqualTo(88_500);
  }

  private static long room(HttpResponse<String> response) {
    return StructuredFields.parseList(response.headers().firstValue("RateLimit").orElseThrow()).get(0).integer("r");
  }

  @Test
  void aBadCostAfterFailsStartUpNamingItsProperty() {
    assertThatThrownBy(() -> new SpringApplicationBuilder(App.class)
        .properties("server.port=0", "ratelimit.backend=memory", "ratelimit.policies.api.limit=1",
            "ratelimit.policies.api.window=1m", "ratelimit.filter.rules[0].name=api",
            "ratelimit.filter.rules[0].paths=/**", "ratelimit.filter.rules[0].policies=api",
            "ratelimit.filter.rules[0].cost-after=#result.tokens")
        .run().close())
        .hasStackTraceContaining("invalid ratelimit.filter.rules[0].cost-after: rule 'api': cost-after expression"
            + " '#result.tokens' reads #result, an unknown variable");
  }

  @Test
  void aBadConditionFailsStartUpNamingItsProperty() {
    assertThatThrownBy(() -> new SpringApplicationBuilder(App.class)
        .properties("server.port=0", "ratelimit.backend=memory", "ratelimit.policies.api.limit=1",
            "ratelimit.policies.api.window=1m", "ratelimit.filter.rules[0].name=api",
            "ratelimit.filter.rules[0].paths=/**", "ratelimit.filter.rules[0].policies=api",
            "ratelimit.filter.rules[0].count-when=#result == false")
        .run().close())
        .hasStackTraceContaining("invalid ratelimit.filter.rules[0].count-when: rule 'api': count-when expression"
            + " '#result == false' reads #result, an unknown variable");
  }
}

package dev.ratelimit.example.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.ManualClock;
import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.spi.Backend;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import tools.jackson.databind.json.JsonMapper;

/**
 * The demo on a random port, over real HTTP, with a {@link ManualClock} as the limiter's clock
 * (the starter uses the application's {@code InstantSource} bean), so that every number is exact.
 * Test methods share the application: each uses keys of its own.
 */
// the test client plays a proxy on this host: its X-Forwarded-For names the client
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = "ratelimit.trusted-proxies=127.0.0.1/32")
@Import(DemoApplicationTest.Clock.class)
class DemoApplicationTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

  @TestConfiguration(proxyBeanMethods = false)
  static class Clock {
    @Bean
    ManualClock clock() {
      return ManualClock.at(Instant.parse("2026-01-01T00:00:00Z"));
    }
  }

  @LocalServerPort
  int port;

  @Autowired
  ManualClock clock;

  @Autowired
  Backend backend;

  @Test
  void theBackendIsInMemoryWhenNoRedisIsConfigured() {
    assertThat(backend).isInstanceOf(InMemoryBackend.class);
  }

  @Test
  void perUserLimitAllowsFiveThenAnswers429WithHeadersAndAProblem() throws Exception {
    for (int i = 1; i <= 5; i++) {
      HttpResponse<String> ok = send("GET", "/api/profile", "X-User", "alice");
      assertThat(ok.statusCode()).isEqualTo(200);
      assertThat(json(ok)).containsEntry("user", "alice");
      assertThat(ok.headers().firstValue("RateLimit-Policy")).hasValue("\"per-user\";q=5;w=60");
      // GCRA, 5 a minute: one unit every 12 s; r is what remains, t when the key is fresh again
      assertThat(ok.headers().firstValue("RateLimit")).hasValue("\"per-user\";r=" + (5 - i) + ";t=" + 12 * i);
    }

    HttpResponse<String> denied = send("GET", "/api/profile", "X-User", "alice");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(denied.headers().firstValue("Retry-After")).hasValue("12");
    assertThat(denied.headers().firstValue("Cache-Control")).hasValue("no-store");
    assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"per-user\";q=5;w=60");
    // t, the effective window, is the wait on a denial (Retry-After must not come before its end)
    assertThat(denied.headers().firstValue("RateLimit")).hasValue("\"per-user\";r=0;t=12");
    assertThat(denied.headers().firstValue("Content-Type")).hasValueSatisfying(
        type -> assertThat(type).startsWith("application/problem+json"));
    Map<String, Object> problem = json(denied);
    assertThat(problem).containsEntry("type", QUOTA_EXCEEDED).containsEntry("status", 429)
        .containsEntry("violated-policies", List.of("per-user"));

    clock.advance(Duration.ofSeconds(11));
    assertThat(send("GET", "/api/profile", "X-User", "alice").headers().firstValue("Retry-After")).hasValue("1");
    clock.advance(Duration.ofSeconds(1));
    assertThat(send("GET", "/api/profile", "X-User", "alice").statusCode()).as("12 s later").isEqualTo(200);
  }

  @Test
  void usersHaveTheirOwnBudgets() throws Exception {
    for (int i = 0; i < 5; i++) {
      assertThat(send("GET", "/api/profile", "X-User", "carol").statusCode()).isEqualTo(200);
    }
    assertThat(send("GET", "/api/profile", "X-User", "carol").statusCode()).isEqualTo(429);

    HttpResponse<String> dave = send("GET", "/api/profile", "X-User", "dave");
    assertThat(dave.statusCode()).isEqualTo(200);
    assertThat(dave.headers().firstValue("RateLimit")).hasValue("\"per-user\";r=4;t=12");
  }

  @Test
  void perIpLimitCountsEveryUserOfOneAddress() throws Exception {
    for (int i = 0; i < 10; i++) {
      HttpResponse<String> ok = send("GET", "/api/search?q=" + i, "X-Forwarded-For", "203.0.113.7", "X-User", "u" + i);
      assertThat(ok.statusCode()).isEqualTo(200);
      assertThat(ok.headers().firstValue("RateLimit")).hasValue("\"per-ip\";r=" + (9 - i) + ";t=" + 6 * (i + 1));
    }
    HttpResponse<String> denied = send("GET", "/api/search?q=x", "X-Forwarded-For", "203.0.113.7", "X-User", "new");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(denied.headers().firstValue("Retry-After")).hasValue("6");
    assertThat(json(denied)).containsEntry("violated-policies", List.of("per-ip"));

    assertThat(send("GET", "/api/search?q=x", "X-Forwarded-For", "203.0.113.8").statusCode())
        .as("another address").isEqualTo(200);
  }

  @Test
  void twoPoliciesOnOneMethodTheExhaustedOneDenies() throws Exception {
    assertThat(send("POST", "/api/reports", "X-User", "erin").statusCode()).isEqualTo(200);
    HttpResponse<String> second = send("POST", "/api/reports", "X-User", "erin");
    assertThat(second.statusCode()).isEqualTo(200);
    assertThat(second.headers().firstValue("RateLimit-Policy"))
        .hasValue("\"reports-burst\";q=2;w=10, \"reports-hourly\";q=5;w=3600");
    assertThat(second.headers().firstValue("RateLimit"))
        .hasValue("\"reports-burst\";r=0;t=10, \"reports-hourly\";r=3;t=1440");

    // the third within 10 s: the burst policy denies (one every 5 s); the hourly one had room
    HttpResponse<String> burst = send("POST", "/api/reports", "X-User", "erin");
    assertThat(burst.statusCode()).isEqualTo(429);
    assertThat(burst.headers().firstValue("Retry-After")).hasValue("5");
    assertThat(json(burst)).containsEntry("violated-policies", List.of("reports-burst"));

    // spaced out, three more pass; then the hourly policy (5, one every 12 min) is the one that denies
    for (int i = 0; i < 3; i++) {
      clock.advance(Duration.ofSeconds(10));
      assertThat(send("POST", "/api/reports", "X-User", "erin").statusCode()).isEqualTo(200);
    }
    clock.advance(Duration.ofSeconds(10));
    HttpResponse<String> hourly = send("POST", "/api/reports", "X-User", "erin");
    assertThat(hourly.statusCode()).isEqualTo(429);
    assertThat(json(hourly)).containsEntry("violated-policies", List.of("reports-hourly"));
    assertThat(hourly.headers().firstValue("Retry-After")).hasValue(Long.toString(12 * 60 - 40));
  }

  @Test
  void theFilterRuleFromYamlLimitsPublicPaths() throws Exception {
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> ok = send("GET", "/public/status", "X-Api-Key", "key-1");
      assertThat(ok.statusCode()).isEqualTo(200);
      assertThat(ok.headers().firstValue("RateLimit-Policy")).hasValue("\"public\";q=3;w=10");
    }
    HttpResponse<String> denied = send("GET", "/public/status", "X-Api-Key", "key-1");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(denied.headers().firstValue("Retry-After")).hasValue("4"); // one every 3.33 s, rounded up
    assertThat(json(denied)).containsEntry("type", QUOTA_EXCEEDED).containsEntry("violated-policies", List.of("public"));

    assertThat(send("GET", "/public/status", "X-Api-Key", "key-2").statusCode()).as("another API key").isEqualTo(200);
    HttpResponse<String> unlimited = send("GET", "/actuator/health");
    assertThat(unlimited.statusCode()).isEqualTo(200);
    assertThat(unlimited.headers().firstValue("RateLimit")).as("no rule, no annotation").isEmpty();
  }

  @Test
  void theActuatorEndpointShowsAKeysState() throws Exception {
    send("GET", "/api/profile", "X-User", "frank");
    send("GET", "/api/profile", "X-User", "frank");
    HttpResponse<String> state = send("GET", "/actuator/ratelimits/per-user/frank");
    assertThat(state.statusCode()).isEqualTo(200);
    assertThat(json(state)).containsEntry("key", "frank").containsEntry("remaining", 3)
        .containsEntry("allowed", true);
  }

  private HttpResponse<String> send(String method, String path, String... headers) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .method(method, HttpRequest.BodyPublishers.noBody());
    for (int i = 0; i < headers.length; i += 2) {
      request.header(headers[i], headers[i + 1]);
    }
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> json(HttpResponse<String> response) {
    return JsonMapper.shared().readValue(response.body(), Map.class);
  }
}

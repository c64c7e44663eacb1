package dev.ratelimit.service;

import static dev.ratelimit.service.Http.json;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.ManualClock;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import tools.jackson.databind.JsonNode;

/** The service on a random port, in memory, on a manual clock; real HTTP. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = "ratelimit-service.admin-token=" + Http.ADMIN_TOKEN)
class DecisionApiTest {
  static final Instant START = Instant.ofEpochSecond(1_700_000_000L);

  @TestConfiguration
  static class Clock {
    @Bean
    ManualClock clock() {
      return ManualClock.at(START);
    }
  }

  @LocalServerPort
  int port;
  @Autowired
  ManualClock clock;
  Http http;

  @BeforeEach
  void setUp() {
    http = new Http(port, Http.ADMIN_TOKEN);
  }

  private static String unique(String name) {
    return name + ":" + System.nanoTime();
  }

  @Test
  void allowsUpToTheLimitThenDeniesWithHeadersAndTheExactWait() {
    String key = unique("user");
    for (int i = 1; i <= 5; i++) {
      HttpResponse<String> allowed = http.post("/v1/check", Map.of("key", key, "policy", "login"));
      assertThat(allowed.statusCode()).isEqualTo(200);
      assertThat(json(allowed).get("allowed").asBoolean()).isTrue();
      assertThat(json(allowed).get("remaining").asLong()).isEqualTo(5 - i);
      assertThat(allowed.headers().firstValue("RateLimit-Policy")).hasValue("\"login\";q=5;w=900");
      assertThat(allowed.headers().firstValue("RateLimit")).hasValue("\"login\";r=" + (5 - i) + ";t=900");
      assertThat(allowed.headers().firstValue("Retry-After")).isEmpty();
      assertThat(allowed.headers().firstValue("Cache-Control")).hasValue("no-store");
      assertThat(allowed.headers().firstValue("Content-Type")).hasValue("application/json");
    }
    clock.advance(Duration.ofSeconds(100));
    HttpResponse<String> denied = http.post("/v1/check", Map.of("key", key, "policy", "login"));
    assertThat(denied.statusCode()).isEqualTo(429);
    JsonNode body = json(denied);
    assertThat(body.get("type").asString()).isEqualTo("https://iana.org/assignments/http-problem-types#quota-exceeded");
    assertThat(body.get("status").asInt()).isEqualTo(429);
    assertThat(body.get("instance").asString()).isEqualTo("/v1/check");
    assertThat(body.get("violated-policies").get(0).asString()).isEqualTo("login");
    assertThat(body.get("allowed").asBoolean()).isFalse();
    assertThat(body.get("policy").asString()).isEqualTo("login");
    assertThat(body.get("limit").asLong()).isEqualTo(5);
    assertThat(body.get("remaining").asLong()).isZero();
    assertThat(body.get("retry_after").asDouble()).isEqualTo(800.0);
    assertThat(body.get("degraded").asBoolean()).isFalse();
    assertThat(denied.headers().firstValue("Retry-After")).hasValue("800");
    assertThat(denied.headers().firstValue("Cache-Control")).hasValue("no-store");
    assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/problem+json");
  }

  @Test
  void costDefaultsToOneAndCountsWhenGiven() {
    String key = unique("bulk");
    assertThat(json(http.post("/v1/check", Map.of("key", key, "policy", "per-user", "cost", 30))).get("remaining").asLong())
        .isEqualTo(70);
    assertThat(json(http.post("/v1/check", Map.of("key", key, "policy", "per-user"))).get("remaining").asLong())
        .isEqualTo(69);
  }

  @Test
  void leakyBucketReportsTheDelay() {
    String key = unique("out");
    JsonNode first = json(http.post("/v1/check", Map.of("key", key, "policy", "outbound")));
    JsonNode second = json(http.post("/v1/check", Map.of("key", key, "policy", "outbound")));
    assertThat(first.get("delay").asDouble()).isZero();
    assertThat(second.get("delay").asDouble()).isEqualTo(0.1); // 10 per second leave 100 ms apart
  }

  @Test
  void checkAllIsAllOrNothing() {
    String key = unique("both");
    for (int i = 0; i < 5; i++) {
      JsonNode allowed = json(http.post("/v1/check-all", Map.of("key", key, "policies", List.of("per-user", "login"))));
      assertThat(allowed.get("allowed").asBoolean()).isTrue();
    }
    HttpResponse<String> denied = http.post("/v1/check-all", Map.of("key", key, "policies", List.of("per-user", "login")));
    assertThat(denied.statusCode()).isEqualTo(429);
    JsonNode body = json(denied);
    assertThat(body.get("allowed").asBoolean()).isFalse();
    assertThat(body.get("limiting").asString()).isEqualTo("login");
    assertThat(body.get("violated-policies")).hasSize(1);
    assertThat(body.get("decisions")).hasSize(2);
    assertThat(body.get("decisions").get(0).get("policy").asString()).isEqualTo("per-user");
    assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"per-user\";q=100;w=60, \"login\";q=5;w=900");
    assertThat(denied.headers().firstValue("Retry-After")).hasValue("900");
    // the denial consumed nothing from per-user: 5 of 100 used
    JsonNode perUser = json(http.get("/v1/inspect/per-user/" + key));
    assertThat(perUser.get("remaining").asLong()).isEqualTo(95);
  }

  @Test
  void keysInPathsMayBePercentEncodedWhole() {
    String key = "a/b;c d%e\\f?" + System.nanoTime();
    http.post("/v1/check", Map.of("key", key, "policy", "login", "cost", 2));
    String encoded = java.net.URLEncoder.encode(key, java.nio.charset.StandardCharsets.UTF_8).replace("+", "%20");
    JsonNode inspected = json(http.get("/v1/inspect/login/" + encoded));
    assertThat(inspected.get("remaining").asLong()).isEqualTo(3);
    assertThat(http.delete("/v1/keys/login/" + encoded).statusCode()).isEqualTo(204);
    assertThat(json(http.get("/v1/inspect/login/" + encoded)).get("remaining").asLong()).isEqualTo(5);
  }

  @Test
  void listsThePoliciesInConfigurationOrder() {
    JsonNode policies = json(http.get("/v1/policies"));
    assertThat(policies).hasSize(5);
    assertThat(policies.get(0).get("name").asString()).isEqualTo("per-user");
    JsonNode login = policies.get(3);
    assertThat(login.get("name").asString()).isEqualTo("login");
    assertThat(login.get("limit").asLong()).isEqualTo(5);
    assertThat(login.get("window").asString()).isEqualTo("PT15M");
    assertThat(login.get("window_seconds").asDouble()).isEqualTo(900.0);
    assertThat(login.get("algorithm").asString()).isEqualTo("SLIDING_LOG");
  }

  @Test
  void inspectConsumesNothingAndResetStartsAfresh() {
    String key = "tenant/7/" + unique("user"); // slashes in a path key
    http.post("/v1/check", Map.of("key", key, "policy", "login", "cost", 5));
    for (int i = 0; i < 3; i++) {
      JsonNode inspected = json(http.get("/v1/inspect/login/" + key));
      assertThat(inspected.get("allowed").asBoolean()).isFalse();
      assertThat(inspected.get("remaining").asLong()).isZero();
    }
    assertThat(http.delete("/v1/keys/login/" + key).statusCode()).isEqualTo(204);
    JsonNode fresh = json(http.post("/v1/check", Map.of("key", key, "policy", "login")));
    assertThat(fresh.get("allowed").asBoolean()).isTrue();
    assertThat(fresh.get("remaining").asLong()).isEqualTo(4);
  }

  @Test
  void healthIncludesTheBackendAndPrometheusHasTheDecisions() {
    http.post("/v1/check", Map.of("key", unique("metrics"), "policy", "per-ip"));
    JsonNode health = json(http.get("/actuator/health"));
    assertThat(health.get("status").asString()).isEqualTo("UP");
    assertThat(health.get("components").get("ratelimit").get("status").asString()).isEqualTo("UP");
    assertThat(health.get("components").get("ratelimit").get("details").get("backend").asString()).isEqualTo("memory");
    String prometheus = http.get("/actuator/prometheus").body();
    assertThat(prometheus).containsPattern("ratelimit_decisions_total\\{[^}]*policy=\"per-ip\"[^}]*\\} [1-9]");
  }

  @Test
  void servesItsOpenApiDocument() {
    HttpResponse<String> doc = http.get("/v1/openapi.yaml");
    assertThat(doc.statusCode()).isEqualTo(200);
    assertThat(doc.body()).startsWith("openapi: 3.1.0");
    assertThat(doc.headers().firstValue("Content-Type")).hasValueSatisfying(type -> assertThat(type).startsWith("application/yaml"));
  }

  @Test
  void wrongMethodAndUnknownPathAreProblemsNot500() {
    HttpResponse<String> wrongMethod = http.get("/v1/check");
    assertThat(wrongMethod.statusCode()).isEqualTo(405);
    assertThat(wrongMethod.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(http.get("/v1/nothing").statusCode()).isEqualTo(404);
    HttpResponse<String> wrongType = http.send(HttpRequest.newBuilder(URI.create(http.base() + "/v1/check"))
        .header("Content-Type", "text/plain").POST(HttpRequest.BodyPublishers.ofString("hello")));
    assertThat(wrongType.statusCode()).isEqualTo(415);
  }
}

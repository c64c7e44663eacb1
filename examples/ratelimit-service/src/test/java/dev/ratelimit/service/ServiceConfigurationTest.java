package dev.ratelimit.service;

import static dev.ratelimit.service.Http.json;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.tck.redis.RedisServer;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;

/**
 * The service configured by environment variables: policy overrides, Redis from
 * {@code RATELIMIT_REDIS_URL} shared by two instances, and a dead Redis decided by the failure mode.
 */
class ServiceConfigurationTest {

  @Test
  void environmentVariablesOverrideThePolicies() {
    try (ConfigurableApplicationContext service = ServiceInstances.start(Map.of(
        "RATELIMIT_POLICIES_LOGIN_LIMIT", "2", "RATELIMIT_POLICIES_LOGIN_WINDOW", "1h"))) {
      Http http = new Http(ServiceInstances.port(service));
      JsonNode login = null;
      for (JsonNode policy : json(http.get("/v1/policies"))) {
        login = policy.get("name").asString().equals("login") ? policy : login;
      }
      assertThat(login).isNotNull();
      assertThat(login.get("limit").asLong()).isEqualTo(2);
      assertThat(login.get("window").asString()).isEqualTo("PT1H");
      assertThat(login.get("algorithm").asString()).isEqualTo("SLIDING_LOG"); // from application.yml
      String key = "env:" + System.nanoTime();
      assertThat(json(http.post("/v1/check", Map.of("key", key, "policy", "login"))).get("allowed").asBoolean()).isTrue();
      assertThat(json(http.post("/v1/check", Map.of("key", key, "policy", "login"))).get("allowed").asBoolean()).isTrue();
      assertThat(json(http.post("/v1/check", Map.of("key", key, "policy", "login"))).get("allowed").asBoolean()).isFalse();
    }
  }

  @Test
  void twoInstancesOnOneRedisShareOneLimit() {
    Map<String, String> env = Map.of("RATELIMIT_REDIS_URL", RedisServer.shared().url(),
        "RATELIMIT_REDIS_KEY_PREFIX", "service-" + System.nanoTime(), "RATELIMIT_TIMEOUT", "5s",
        "RATELIMIT_REDIS_TIMEOUT", "5s", "RATELIMIT_SERVICE_ADMIN_TOKEN", Http.ADMIN_TOKEN);
    try (ConfigurableApplicationContext a = ServiceInstances.start(env);
        ConfigurableApplicationContext b = ServiceInstances.start(env)) {
      Http first = new Http(ServiceInstances.port(a), Http.ADMIN_TOKEN);
      Http second = new Http(ServiceInstances.port(b));
      String key = "shared:" + System.nanoTime();
      int allowed = 0;
      for (int i = 0; i < 8; i++) {
        Http http = i % 2 == 0 ? first : second;
        JsonNode decision = json(http.post("/v1/check", Map.of("key", key, "policy", "login")));
        assertThat(decision.get("degraded").asBoolean()).isFalse();
        allowed += decision.get("allowed").asBoolean() ? 1 : 0;
      }
      assertThat(allowed).isEqualTo(5); // login: 5 per 15 minutes, across both instances
      assertThat(json(second.get("/v1/inspect/login/" + key)).get("remaining").asLong()).isZero();
      assertThat(first.delete("/v1/keys/login/" + key).statusCode()).isEqualTo(204);
      assertThat(json(second.get("/v1/inspect/login/" + key)).get("remaining").asLong()).isEqualTo(5);

      JsonNode health = json(first.get("/actuator/health")).get("components").get("ratelimit");
      assertThat(health.get("status").asString()).isEqualTo("UP");
      assertThat(health.get("details").get("backend").asString()).isEqualTo("redis");
    }
  }

  @Test
  void aDeadRedisIsDecidedByTheFailureModeAndReportedDown() throws Exception {
    int deadPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      deadPort = socket.getLocalPort();
    }
    try (ConfigurableApplicationContext service = ServiceInstances.start(Map.of(
        "RATELIMIT_REDIS_URL", "redis://127.0.0.1:" + deadPort, "RATELIMIT_TIMEOUT", "300ms",
        "RATELIMIT_REDIS_TIMEOUT", "200ms", "RATELIMIT_SERVICE_ADMIN_TOKEN", Http.ADMIN_TOKEN))) {
      Http http = new Http(ServiceInstances.port(service), Http.ADMIN_TOKEN);
      HttpResponse<String> check = http.post("/v1/check", Map.of("key", "k", "policy", "per-user"));
      assertThat(check.statusCode()).isEqualTo(200);
      JsonNode decision = json(check);
      assertThat(decision.get("allowed").asBoolean()).isTrue(); // FAIL_OPEN, from application.yml
      assertThat(decision.get("degraded").asBoolean()).isTrue();
      assertThat(decision.get("remaining").isNull()).isTrue();
      assertThat(check.headers().firstValue("RateLimit")).isEmpty(); // never invented

      HttpResponse<String> inspect = http.get("/v1/inspect/per-user/k");
      assertThat(inspect.statusCode()).isEqualTo(503);
      assertThat(json(inspect).get("detail").asString()).contains("backend did not answer", "retry later")
          .doesNotContain("Exception"); // the client learns what to do, the log gets the type
      assertThat(inspect.headers().firstValue("Content-Type")).hasValue("application/problem+json");

      HttpResponse<String> reset = http.delete("/v1/keys/per-user/k");
      assertThat(reset.statusCode()).as("a reset that could not reach Redis is not a 204").isEqualTo(503);
      assertThat(reset.headers().firstValue("Content-Type")).hasValue("application/problem+json");

      // FAIL_OPEN keeps answering: the component is UP, and says the backend is not
      HttpResponse<String> health = http.get("/actuator/health");
      // Redis never answered, and FAIL_OPEN means open: ready (Redis is not part of readiness by default)
      assertThat(health.statusCode()).isEqualTo(200);
      assertThat(json(health).get("components").get("readinessState").get("status").asString())
          .isEqualTo("UP");
      JsonNode component = json(health).get("components").get("ratelimit");
      assertThat(component.get("status").asString()).isEqualTo("UP");
      assertThat(component.get("details").get("backendUp").asBoolean()).isFalse();
      assertThat(component.get("details").get("failureMode").asString()).isEqualTo("FAIL_OPEN");
      assertThat(component.get("details").has("error")).as("it names Redis's address: not for a public endpoint")
          .isFalse();
    }
  }
}

package dev.ratelimit.service;

import static dev.ratelimit.service.Http.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;

/**
 * State-changing operations need the operator's admin token: refused (403) when none is
 * configured, 401 for a missing or wrong one; checks and inspection stay open.
 */
class AdminAccessTest {
  static final String TOKEN = "an-admin-token-of-32-characters!";

  @Test
  void withoutAConfiguredTokenResetsAreRefusedAndSayHowToEnableThem() {
    try (ConfigurableApplicationContext service = ServiceInstances.start(Map.of(
        "MANAGEMENT_ENDPOINT_RATELIMITS_ACCESS", "unrestricted"))) {
      Http http = new Http(ServiceInstances.port(service), TOKEN); // a token the service does not know
      String key = "locked:" + System.nanoTime();
      http.post("/v1/check", Map.of("key", key, "policy", "login", "cost", 5));

      HttpResponse<String> reset = http.delete("/v1/keys/login/" + key);
      assertProblem(reset, 403, "ratelimit-service.admin-token");
      assertThat(json(reset).get("detail").asString()).contains("RATELIMIT_SERVICE_ADMIN_TOKEN", "Authorization: Bearer");
      // the actuator's own reset, turned on by the operator, is a state-changing operation too
      assertProblem(http.delete("/actuator/ratelimits/login/" + key), 403, "ratelimit-service.admin-token");

      JsonNode state = json(http.get("/v1/inspect/login/" + key)); // inspect stays open: read-only
      assertThat(state.get("remaining").asLong()).as("the lockout stands").isZero();
      assertThat(http.post("/v1/check", Map.of("key", key, "policy", "login")).statusCode()).isEqualTo(429);
    }
  }

  @Test
  void withAConfiguredTokenAMissingOrWrongOneIs401AndTheRightOneResets() {
    try (ConfigurableApplicationContext service = ServiceInstances.start(Map.of(
        "RATELIMIT_SERVICE_ADMIN_TOKEN", TOKEN, "MANAGEMENT_ENDPOINT_RATELIMITS_ACCESS", "unrestricted"))) {
      int port = ServiceInstances.port(service);
      String key = "locked:" + System.nanoTime();
      Http anonymous = new Http(port);
      assertThat(anonymous.post("/v1/check", Map.of("key", key, "policy", "login", "cost", 5)).statusCode())
          .as("checks need no token").isEqualTo(200);

      HttpResponse<String> missing = anonymous.delete("/v1/keys/login/" + key);
      assertProblem(missing, 401, "send the admin token (ratelimit-service.admin-token) as 'Authorization: Bearer <token>'");
      assertThat(missing.headers().firstValue("WWW-Authenticate")).hasValue("Bearer realm=\"ratelimit-service\"");

      String wrongToken = TOKEN.substring(0, TOKEN.length() - 1) + "?";
      HttpResponse<String> wrong = new Http(port, wrongToken).delete("/v1/keys/login/" + key);
      assertProblem(wrong, 401, "not the admin token");
      assertThat(wrong.headers().firstValue("WWW-Authenticate"))
          .hasValue("Bearer realm=\"ratelimit-service\", error=\"invalid_token\"");
      HttpResponse<String> otherScheme = anonymous.send(HttpRequest.newBuilder(URI.create(anonymous.base()
          + "/v1/keys/login/" + key)).header("Authorization", "Basic " + TOKEN).DELETE());
      assertProblem(otherScheme, 401, "Authorization: Bearer");
      assertProblem(anonymous.delete("/actuator/ratelimits/login/" + key), 401, "Authorization: Bearer");
      assertThat(json(anonymous.get("/v1/inspect/login/" + key)).get("remaining").asLong())
          .as("nothing was reset").isZero();

      assertThat(new Http(port, TOKEN).delete("/v1/keys/login/" + key).statusCode()).isEqualTo(204);
      assertThat(json(anonymous.get("/v1/inspect/login/" + key)).get("remaining").asLong()).isEqualTo(5);
      HttpResponse<String> lowerCaseScheme = anonymous.send(HttpRequest.newBuilder(URI.create(anonymous.base()
          + "/v1/keys/login/" + key)).header("Authorization", "bearer " + TOKEN).DELETE());
      assertThat(lowerCaseScheme.statusCode()).isEqualTo(204);
    }
  }

  @Test
  void aShortOrBlankTokenFailsStartUpNamingTheProperty() {
    assertThatThrownBy(() -> ServiceInstances.start(Map.of("RATELIMIT_SERVICE_ADMIN_TOKEN", "hunter2")).close())
        .rootCause().hasMessageContaining("ratelimit-service.admin-token (RATELIMIT_SERVICE_ADMIN_TOKEN) is only 7 characters long")
        .hasMessageContaining("at least 16 characters").hasMessageNotContaining("hunter2");
    assertThatThrownBy(() -> ServiceInstances.start(Map.of("RATELIMIT_SERVICE_ADMIN_TOKEN", "                    ")).close())
        .rootCause().hasMessageContaining("ratelimit-service.admin-token (RATELIMIT_SERVICE_ADMIN_TOKEN) is blank");
  }

  private static void assertProblem(HttpResponse<String> response, int status, String detail) {
    assertThat(response.statusCode()).isEqualTo(status);
    assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    JsonNode problem = json(response);
    assertThat(problem.get("status").asInt()).isEqualTo(status);
    assertThat(problem.get("detail").asString()).contains(detail);
  }
}

package dev.ratelimit.service;

import static dev.ratelimit.service.Http.json;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * Every key a check accepts can be inspected and reset, through the body forms
 * ({@code POST /v1/inspect}, {@code POST /v1/reset}): also keys no path can carry.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = "ratelimit-service.admin-token=" + Http.ADMIN_TOKEN)
class KeysInBodiesTest {
  @LocalServerPort
  int port;
  Http admin;
  Http anonymous;

  @BeforeEach
  void setUp() {
    admin = new Http(port, Http.ADMIN_TOKEN);
    anonymous = new Http(port);
  }

  /** Keys as JSON string literals: a NUL, a lone surrogate, 9000 characters (no request line holds them). */
  @ParameterizedTest
  @ValueSource(strings = {"nul:\\u0000:", "surrogate:\\ud800:", "long:"})
  void aKeyNoPathCanCarryIsInspectedAndResetInTheBody(String prefix) {
    String key = prefix + System.nanoTime() + (prefix.equals("long:") ? "x".repeat(9000) : "");
    String body = "{\"key\":\"" + key + "\",\"policy\":\"login\"}";
    HttpResponse<String> checked = anonymous.post("/v1/check", "{\"key\":\"" + key + "\",\"policy\":\"login\",\"cost\":2}");
    assertThat(json(checked).get("remaining").asLong()).isEqualTo(3);

    HttpResponse<String> inspected = anonymous.post("/v1/inspect", body);
    assertThat(inspected.statusCode()).isEqualTo(200);
    assertThat(inspected.headers().firstValue("Cache-Control")).hasValue("no-store");
    assertThat(json(inspected).get("remaining").asLong()).isEqualTo(3);
    assertThat(json(inspected).get("allowed").asBoolean()).isTrue();
    assertThat(json(anonymous.post("/v1/inspect", body)).get("remaining").asLong()).as("consumes nothing").isEqualTo(3);

    assertThat(anonymous.post("/v1/reset", body).statusCode()).as("the body form needs the token too").isEqualTo(401);
    assertThat(json(anonymous.post("/v1/inspect", body)).get("remaining").asLong()).isEqualTo(3);
    assertThat(admin.post("/v1/reset", body).statusCode()).isEqualTo(204);
    assertThat(json(anonymous.post("/v1/inspect", body)).get("remaining").asLong()).isEqualTo(5);
  }

  @Test
  void theBodyFormsRefuseBadInputNamingTheField() {
    assertInvalid(anonymous.post("/v1/inspect", "{\"policy\":\"login\"}"), "key", "key is required");
    assertInvalid(anonymous.post("/v1/inspect", "{\"key\":\"k\",\"policy\":\"nope\"}"), "policy", "unknown policy 'nope'");
    assertInvalid(anonymous.post("/v1/inspect", "{\"key\":\"k\",\"policy\":\"login\",\"cost\":1}"), "cost",
        "unknown field 'cost'");
    assertInvalid(admin.post("/v1/reset", "{\"key\":\"k\"}"), "policy", "policy is required");
    assertInvalid(admin.post("/v1/reset", "{\"key\":\"\",\"policy\":\"login\"}"), "key", "key is required");
  }

  private static void assertInvalid(HttpResponse<String> response, String field, String reason) {
    assertThat(response.statusCode()).isEqualTo(400);
    assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(json(response).get("invalid-params").get(0).get("name").asString()).isEqualTo(field);
    assertThat(json(response).get("detail").asString()).contains(reason);
  }
}

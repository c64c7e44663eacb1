package dev.ratelimit.spring;

import static dev.ratelimit.spring.ActuatorApp.get;
import static dev.ratelimit.spring.ActuatorApp.send;
import static dev.ratelimit.spring.ActuatorApp.start;
import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/** The {@code ratelimits} Actuator endpoint over real HTTP: exposure, inspect, access, reset, updates. */
class RateLimitsEndpointTest {
  private static final String EXPOSED = "management.endpoints.web.exposure.include=ratelimits";
  private static final String UNRESTRICTED = "management.endpoint.ratelimits.access=unrestricted";

  private static int status(ConfigurableApplicationContext app, String path) throws Exception {
    return get(app, path).statusCode();
  }

  private static <T> T json(HttpResponse<String> response, String path) {
    return JsonPath.read(response.body(), path);
  }

  private static Map<String, Object> map(HttpResponse<String> response, String path) {
    return json(response, path);
  }

  private static int number(HttpResponse<String> response, String path) {
    Integer value = json(response, path);
    return value;
  }

  private static String text(HttpResponse<String> response, String path) {
    return json(response, path);
  }

  @Test
  void notExposedByDefault() throws Exception {
    try (ConfigurableApplicationContext app = start()) {
      assertThat(status(app, "/actuator/ratelimits")).isEqualTo(404);
      assertThat(app.getBeansOfType(RateLimitsEndpoint.class)).as("not available: no bean").isEmpty();
    }
  }

  @Test
  void listsTheConfiguredPoliciesWhenExposed() throws Exception {
    try (ConfigurableApplicationContext app = start(EXPOSED, "ratelimit.policies.bucket.limit=10",
        "ratelimit.policies.bucket.window=1s", "ratelimit.policies.bucket.algorithm=TOKEN_BUCKET",
        "ratelimit.policies.bucket.burst=4")) {
      HttpResponse<String> response = get(app, "/actuator/ratelimits");
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(RateLimitsEndpointTest.<List<String>>json(response, "$.policies[*].name")).containsExactly("api", "open", "bucket");
      assertThat(map(response, "$.policies[2]")).containsExactlyInAnyOrderEntriesOf(Map.of(
          "name", "bucket", "limit", 10, "window", "PT1S", "windowMs", 1000, "algorithm", "TOKEN_BUCKET", "burst", 4));
      HttpResponse<String> one = get(app, "/actuator/ratelimits/api");
      assertThat(one.statusCode()).isEqualTo(200);
      assertThat(number(one, "$.limit")).isEqualTo(3);
      assertThat(text(one, "$.algorithm")).isEqualTo("FIXED_WINDOW");
      assertThat(status(app, "/actuator/ratelimits/nope")).isEqualTo(404);
    }
  }

  @Test
  void inspectShowsAKeysStateAndConsumesNothing() throws Exception {
    try (ConfigurableApplicationContext app = start(EXPOSED)) {
      assertThat(status(app, "/limited/alice")).isEqualTo(200);
      assertThat(status(app, "/limited/alice")).isEqualTo(200);
      for (int i = 0; i < 5; i++) {
        HttpResponse<String> state = get(app, "/actuator/ratelimits/api/alice");
        assertThat(state.statusCode()).isEqualTo(200);
        assertThat(map(state, "$")).containsExactlyInAnyOrderEntriesOf(Map.of(
            "policy", "api", "key", "alice", "allowed", true, "limit", 3, "remaining", 1,
            "retryAfterMs", 0, "resetAfterMs", 40_000)); // the clock stands 20 s into its minute
      }
      assertThat(status(app, "/limited/alice")).as("the five inspections took nothing").isEqualTo(200);
      HttpResponse<String> full = get(app, "/actuator/ratelimits/api/alice");
      assertThat(map(full, "$")).containsEntry("allowed", false).containsEntry("remaining", 0)
          .containsEntry("retryAfterMs", 40_000);
      assertThat(status(app, "/limited/alice")).isEqualTo(429);
      assertThat(status(app, "/actuator/ratelimits/nope/alice")).as("unknown policy").isEqualTo(404);
    }
  }

  @Test
  void keysWithSlashesAndFilterKeys() throws Exception {
    try (ConfigurableApplicationContext app = start(EXPOSED)) {
      assertThat(status(app, "/open/1")).isEqualTo(200);
      HttpResponse<String> state = get(app, "/actuator/ratelimits/open/open:127.0.0.1");
      assertThat(number(state, "$.remaining")).as("filter keys are <rule>:<key>").isEqualTo(1);
      HttpResponse<String> slashed = get(app, "/actuator/ratelimits/api/tenant/user");
      assertThat(text(slashed, "$.key")).isEqualTo("tenant/user");
      assertThat(number(slashed, "$.remaining")).isEqualTo(3);
    }
  }

  @Test
  void resetAndUpdateAreRefusedUnderTheDefaultReadOnlyAccess() throws Exception {
    try (ConfigurableApplicationContext app = start(EXPOSED)) {
      for (int i = 0; i < 3; i++) {
        assertThat(status(app, "/limited/bob")).isEqualTo(200);
      }
      HttpResponse<String> reset = send(app, "DELETE", "/actuator/ratelimits/api/bob", null);
      assertThat(reset.statusCode()).as("no DELETE operation under read-only access").isEqualTo(405);
      HttpResponse<String> update = send(app, "POST", "/actuator/ratelimits/api", "{\"limit\":10,\"window\":\"1m\"}");
      assertThat(update.statusCode()).as("no POST operation under read-only access").isEqualTo(405);
      assertThat(status(app, "/limited/bob")).as("still limited, still 3 per minute").isEqualTo(429);
      assertThat(app.getBean(PolicyRegistry.class).get("api", "test").limit()).isEqualTo(3);
    }
  }

  @Test
  void resetWorksWithUnrestrictedAccess() throws Exception {
    try (ConfigurableApplicationContext app = start(EXPOSED, UNRESTRICTED)) {
      for (int i = 0; i < 3; i++) {
        assertThat(status(app, "/limited/carol")).isEqualTo(200);
        assertThat(status(app, "/limited/dave")).isEqualTo(200);
      }
      assertThat(status(app, "/limited/carol")).isEqualTo(429);
      HttpResponse<String> reset = send(app, "DELETE", "/actuator/ratelimits/api/carol", null);
      assertThat(reset.statusCode()).isEqualTo(204);
      assertThat(number(get(app, "/actuator/ratelimits/api/carol"), "$.remaining")).isEqualTo(3);
      assertThat(number(get(app, "/actuator/ratelimits/api/dave"), "$.remaining"))
          .as("other keys untouched").isEqualTo(0);
      for (int i = 0; i < 3; i++) {
        assertThat(status(app, "/limited/carol")).isEqualTo(200);
      }
      assertThat(status(app, "/limited/carol")).isEqualTo(429);
      HttpResponse<String> unknown = send(app, "DELETE", "/actuator/ratelimits/nope/carol", null);
      assertThat(unknown.statusCode()).isEqualTo(400);
      assertThat(unknown.body()).contains("unknown policy 'nope'");
    }
  }

  @Test
  void aRaisedLimitAppliesToTheNextCallAndKeepsEveryCount() throws Exception {
    try (ConfigurableApplicationContext app = start(EXPOSED, UNRESTRICTED)) {
      for (int i = 0; i < 3; i++) {
        assertThat(status(app, "/limited/erin")).isEqualTo(200);
      }
      assertThat(status(app, "/limited/erin")).isEqualTo(429);
      assertThat(status(app, "/open/a")).isEqualTo(200);
      assertThat(status(app, "/open/b")).isEqualTo(200);
      assertThat(status(app, "/open/c")).isEqualTo(429);

      HttpResponse<String> api = send(app, "POST", "/actuator/ratelimits/api", "{\"limit\":5,\"window\":\"1m\"}");
      assertThat(api.statusCode()).isEqualTo(200);
      assertThat(map(api, "$")).containsEntry("limit", 5).containsEntry("algorithm", "FIXED_WINDOW")
          .containsEntry("burst", 5);
      HttpResponse<String> open = send(app, "POST", "/actuator/ratelimits/open", "{\"limit\":3,\"window\":\"1m\"}");
      assertThat(open.statusCode()).isEqualTo(200);

      // @RateLimited: 3 of 5 were used, 2 are left
      assertThat(status(app, "/limited/erin")).isEqualTo(200);
      assertThat(status(app, "/limited/erin")).isEqualTo(200);
      assertThat(status(app, "/limited/erin")).isEqualTo(429);
      // the filter: 2 of 3 were used, 1 is left, and the headers show the new limit
      HttpResponse<String> next = get(app, "/open/d");
      assertThat(next.statusCode()).isEqualTo(200);
      assertThat(next.headers().firstValue("RateLimit-Policy")).hasValue("\"open\";q=3;w=60");
      assertThat(status(app, "/open/e")).isEqualTo(429);
      assertThat(number(get(app, "/actuator/ratelimits/api"), "$.limit")).isEqualTo(5);
    }
  }

  @Test
  void anUpdateIsValidatedNamingTheField() throws Exception {
    try (ConfigurableApplicationContext app = start(EXPOSED, UNRESTRICTED)) {
      assertRefused(app, "api", "{\"window\":\"1m\"}", "limit is required");
      assertRefused(app, "api", "{\"limit\":5}", "window is required");
      assertRefused(app, "api", "{\"limit\":0,\"window\":\"1m\"}", "limit must be at least 1, was 0");
      assertRefused(app, "api", "{\"limit\":5,\"window\":\"1 minute\"}", "window: cannot parse window '1 minute'");
      assertRefused(app, "api", "{\"limit\":5,\"window\":\"1m\",\"algorithm\":\"nope\"}",
          "algorithm must be one of [FIXED_WINDOW, SLIDING_LOG, SLIDING_WINDOW, TOKEN_BUCKET, GCRA, LEAKY_BUCKET], was 'nope'");
      assertRefused(app, "api", "{\"limit\":5,\"window\":\"1m\",\"burst\":0}", "burst must be at least 1, was 0");
      assertRefused(app, "nope", "{\"limit\":5,\"window\":\"1m\"}", "unknown policy 'nope'");
      assertThat(app.getBean(PolicyRegistry.class).get("api", "test").limit()).as("nothing changed").isEqualTo(3);

      HttpResponse<String> bucket = send(app, "POST", "/actuator/ratelimits/api",
          "{\"limit\":10,\"window\":\"1s\",\"algorithm\":\"token-bucket\",\"burst\":4}");
      assertThat(bucket.statusCode()).isEqualTo(200);
      assertThat(map(bucket, "$")).containsExactlyInAnyOrderEntriesOf(Map.of(
          "name", "api", "limit", 10, "window", "PT1S", "windowMs", 1000, "algorithm", "TOKEN_BUCKET", "burst", 4));

      // what GET shows (ISO-8601) can be posted back
      HttpResponse<String> iso = send(app, "POST", "/actuator/ratelimits/api", "{\"limit\":20,\"window\":\"PT2M\"}");
      assertThat(iso.statusCode()).isEqualTo(200);
      assertThat(map(iso, "$")).containsEntry("window", "PT2M").containsEntry("windowMs", 120_000);
      assertRefused(app, "api", "{\"limit\":5,\"window\":\"P1Q\"}", "window: cannot parse window 'P1Q'");
    }
  }

  private static void assertRefused(ConfigurableApplicationContext app, String policy, String body, String message)
      throws Exception {
    HttpResponse<String> response = send(app, "POST", "/actuator/ratelimits/" + policy, body);
    assertThat(response.statusCode()).as(body).isEqualTo(400);
    assertThat(text(response, "$.message")).as(body).contains(message);
  }
}

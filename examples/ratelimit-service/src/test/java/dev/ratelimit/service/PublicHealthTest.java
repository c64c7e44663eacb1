package dev.ratelimit.service;

import static dev.ratelimit.service.Http.json;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;

/**
 * What the service's {@code /actuator/health} shows anyone who can reach it, with its own
 * configuration and a dead Redis: the statuses, and the ratelimit component's backendUp, circuit and
 * failure mode; no address of Redis, no exception class, no disk path (Boot's disk-space
 * component showed the working directory, the ratelimit component the Redis host and port).
 */
class PublicHealthTest {

  @Test
  void healthShowsStatusesAndModesButNoAddressExceptionOrPath() throws Exception {
    int deadPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      deadPort = socket.getLocalPort();
    }
    try (ConfigurableApplicationContext service = ServiceInstances.start(Map.of(
        "RATELIMIT_REDIS_URL", "redis://127.0.0.1:" + deadPort, "RATELIMIT_TIMEOUT", "300ms",
        "RATELIMIT_REDIS_TIMEOUT", "200ms", "RATELIMIT_READINESS_ENABLED", "true"))) { // readiness held too
      HttpResponse<String> response = new Http(ServiceInstances.port(service)).get("/actuator/health");
      assertThat(response.statusCode()).as("Redis never answered: not ready (opted in)").isEqualTo(503);
      JsonNode ratelimit = json(response).get("components").get("ratelimit");
      assertThat(ratelimit.get("status").asString()).isEqualTo("UP");
      assertThat(ratelimit.get("details").get("backendUp").asBoolean()).isFalse();
      assertThat(ratelimit.get("details").get("failureMode").asString()).isEqualTo("FAIL_OPEN");
      assertThat(ratelimit.get("details").get("circuit").asString()).isEqualTo("CLOSED");
      assertThat(response.body())
          .doesNotContain(Integer.toString(deadPort))
          .doesNotContain("127.0.0.1")
          .doesNotContain("Exception")
          .doesNotContain("\"path\"")
          .doesNotContain(System.getProperty("user.dir"));
    }
  }
}

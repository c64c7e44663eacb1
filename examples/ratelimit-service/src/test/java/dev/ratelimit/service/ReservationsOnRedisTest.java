package dev.ratelimit.service;

import static dev.ratelimit.service.Http.json;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.tck.redis.RedisServer;
import java.net.http.HttpResponse;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Reservation tokens across instances on one Redis this test starts: a token issued by one
 * instance is settled by another sharing the secret, once; an instance with another secret (or
 * none) refuses it.
 */
class ReservationsOnRedisTest {
  private static final String SECRET = "fleet-secret-0123456789abcdef-xyz";

  private static ConfigurableApplicationContext instance(RedisServer redis, String prefix, String secret) {
    Map<String, String> env = new HashMap<>();
    env.put("RATELIMIT_REDIS_URL", redis.url());
    env.put("RATELIMIT_REDIS_KEY_PREFIX", prefix);
    env.put("RATELIMIT_TIMEOUT", "5s"); // only a stopped Redis may fail a call here, not a busy machine
    env.put("RATELIMIT_REDIS_TIMEOUT", "5s");
    if (secret != null) {
      env.put("RATELIMIT_SERVICE_RESERVATIONS_SECRET", secret);
    }
    return ServiceInstances.start(env);
  }

  private static long remaining(Http http, String key) {
    return json(http.post("/v1/inspect", Map.of("key", key, "policy", "per-user"))).get("remaining").asLong();
  }

  @Test
  void aTokenIssuedByOneInstanceIsSettledOnceByAnother() {
    String prefix = "reservations-" + System.nanoTime();
    try (RedisServer redis = RedisServer.start();
        ConfigurableApplicationContext a = instance(redis, prefix, SECRET);
        ConfigurableApplicationContext b = instance(redis, prefix, SECRET);
        ConfigurableApplicationContext stranger = instance(redis, prefix, null)) {
      Http first = new Http(ServiceInstances.port(a));
      Http second = new Http(ServiceInstances.port(b));
      Http other = new Http(ServiceInstances.port(stranger));
      String key = "tenant:" + System.nanoTime();
      HttpResponse<String> reserved = first.post("/v1/reserve", Map.of("key", key, "policy", "per-user", "estimate", 30));
      assertThat(reserved.statusCode()).as(reserved.body()).isEqualTo(200);
      String token = json(reserved).get("token").asString();
      assertThat(remaining(second, key)).as("the shared state holds the reservation").isEqualTo(70);

      HttpResponse<String> foreign = other.post("/v1/commit", Map.of("token", token, "actual", 1));
      assertThat(foreign.statusCode()).isEqualTo(400);
      assertThat(json(foreign).get("detail").asString()).contains("another ratelimit-service.reservations.secret");

      HttpResponse<String> committed = second.post("/v1/commit", Map.of("token", token, "actual", 10));
      assertThat(committed.statusCode()).as(committed.body()).isEqualTo(200);
      assertThat(remaining(first, key)).as("20 given back, seen by every instance").isEqualTo(90);

      HttpResponse<String> replayed = first.post("/v1/cancel", Map.of("token", token));
      assertThat(replayed.statusCode()).isEqualTo(400);
      assertThat(json(replayed).get("detail").asString()).contains("already settled");
      assertThat(remaining(second, key)).as("the replay on the issuing instance gave nothing back").isEqualTo(90);
    }
  }

  /**
   * Redis restarted (it keeps nothing on disk here): the state and the record of settled tokens are
   * gone. A settle of a reservation made before gives nothing back into the new state, and neither
   * does a replay of a token settled before (its record lost): their marks name a ledger that no
   * longer exists.
   */
  @Test
  void aSettleAfterRedisRestartedGivesNothingBack() {
    String prefix = "reservations-restart-" + System.nanoTime();
    try (RedisServer redis = RedisServer.start();
        ConfigurableApplicationContext a = instance(redis, prefix, SECRET)) {
      Http http = new Http(ServiceInstances.port(a));
      String key = "tenant:" + System.nanoTime();
      String settled = json(http.post("/v1/reserve", Map.of("key", key, "policy", "per-user", "estimate", 30)))
          .get("token").asString();
      String open = json(http.post("/v1/reserve", Map.of("key", key, "policy", "per-user", "estimate", 10)))
          .get("token").asString();
      assertThat(http.post("/v1/cancel", Map.of("token", settled)).statusCode()).isEqualTo(200);
      assertThat(remaining(http, key)).isEqualTo(90);
      redis.restart();
      assertThat(json(http.post("/v1/check", Map.of("key", key, "policy", "per-user", "cost", 5))).get("remaining")
          .asLong()).as("a fresh state after the restart").isEqualTo(95);
      HttpResponse<String> cancelled = http.post("/v1/cancel", Map.of("token", open));
      assertThat(cancelled.statusCode()).as(cancelled.body()).isEqualTo(200);
      assertThat(remaining(http, key)).as("nothing of the new state given back").isEqualTo(95);
      HttpResponse<String> replayed = http.post("/v1/cancel", Map.of("token", settled));
      assertThat(replayed.statusCode()).as("its settled record was lost with the restart").isEqualTo(200);
      assertThat(remaining(http, key)).as("yet the replay gives nothing back").isEqualTo(95);
    }
  }

  /** When Redis cannot record that a token was settled, the settle is refused (503) and nothing changes. */
  @Test
  void aSettleWhoseRecordCannotBeWrittenIs503AndLeavesTheTokenUnspent() {
    String prefix = "reservations-down-" + System.nanoTime();
    try (RedisServer redis = RedisServer.start();
        ConfigurableApplicationContext a = instance(redis, prefix, SECRET)) {
      Http http = new Http(ServiceInstances.port(a));
      String key = "tenant:" + System.nanoTime();
      String token = json(http.post("/v1/reserve", Map.of("key", key, "policy", "per-user", "estimate", 30)))
          .get("token").asString();
      redis.stop();
      HttpResponse<String> refused = http.post("/v1/cancel", Map.of("token", token));
      assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
      assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    }
  }
}

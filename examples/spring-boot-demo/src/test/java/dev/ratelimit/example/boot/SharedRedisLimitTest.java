package dev.ratelimit.example.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.redis.RedisBackend;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.tck.redis.RedisServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Two instances of the demo with {@code spring.data.redis.url} set share one limit through a real
 * Redis (the test's own {@code redis-server}, or {@code REDIS_URL}; keys under a prefix of this
 * test's own, deleted afterwards).
 */
class SharedRedisLimitTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private final RedisServer redis = RedisServer.shared();
  private final String prefix = "demo-" + UUID.randomUUID();

  @Test
  void twoInstancesShareOnePerUserLimit() throws Exception {
    try (ConfigurableApplicationContext a = start(); ConfigurableApplicationContext b = start()) {
      assertThat(a.getBean(Backend.class)).as("spring.data.redis.url selects Redis").isInstanceOf(RedisBackend.class);

      int allowed = 0;
      for (int i = 0; i < 8; i++) {
        HttpResponse<String> response = get(i % 2 == 0 ? a : b, "/api/profile", "X-User", "grace");
        assertThat(response.statusCode()).isIn(200, 429);
        assertThat(response.headers().firstValue("RateLimit")).as("decided by Redis, not by the failure mode")
            .isPresent();
        allowed += response.statusCode() == 200 ? 1 : 0;
      }
      assertThat(allowed).as("5 a minute for grace, across both instances").isEqualTo(5);

      HttpResponse<String> denied = get(a, "/api/profile", "X-User", "grace");
      assertThat(denied.statusCode()).isEqualTo(429);
      assertThat(Long.parseLong(denied.headers().firstValue("Retry-After").orElseThrow())).isBetween(1L, 12L);
      assertThat(get(b, "/api/profile", "X-User", "heidi").statusCode()).as("another user").isEqualTo(200);
      assertThat(keys()).contains(prefix + ":{grace}:per-user:gcra", prefix + ":{heidi}:per-user:gcra");
    }
  }

  @AfterEach
  void deleteKeys() {
    for (Object key : keys()) {
      redis.command("DEL", key);
    }
  }

  @SuppressWarnings("unchecked")
  private List<Object> keys() {
    return (List<Object>) redis.command("KEYS", prefix + ":*");
  }

  private ConfigurableApplicationContext start() {
    // command-line arguments, which override application.yml
    return new SpringApplicationBuilder(DemoApplication.class).run(
        "--server.port=0",
        "--spring.data.redis.url=" + redis.url(),
        "--ratelimit.redis.key-prefix=" + prefix,
        // fail closed with room for the first connection: a Redis failure shows as a denial here
        "--ratelimit.failure-mode=FAIL_CLOSED",
        "--ratelimit.timeout=5s",
        "--ratelimit.redis.timeout=5s");
  }

  private static HttpResponse<String> get(ConfigurableApplicationContext app, String path, String... headers)
      throws Exception {
    int port = ((WebServerApplicationContext) app).getWebServer().getPort();
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
    for (int i = 0; i < headers.length; i += 2) {
      request.header(headers[i], headers[i + 1]);
    }
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }
}

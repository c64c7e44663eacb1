package dev.ratelimit.example.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.tck.redis.RedisServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;

/** The gateway example over real HTTP, routing to a real backend, with each limiter on a real Redis. */
class GatewayDemoTest {
  private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private static LoopResources loops;
  private static DisposableServer backend;

  @BeforeAll
  static void startBackend() {
    loops = LoopResources.create("backend", 1, true); // not the global ones, which a context closes
    backend = HttpServer.create().host("127.0.0.1").port(0).runOn(loops)
        .handle((request, response) -> response.sendString(Mono.just("worked")))
        .bindNow(Duration.ofSeconds(10));
  }

  @AfterAll
  static void stopBackend() {
    backend.disposeNow(Duration.ofSeconds(10));
    loops.disposeLater().block(Duration.ofSeconds(10));
  }

  private static List<Integer> statuses(String profile, String user, int n) throws Exception {
    List<String> args = new ArrayList<>(List.of("--server.port=0", "--server.address=127.0.0.1",
        "--demo.backend-url=http://127.0.0.1:" + backend.port(),
        "--ratelimit.redis.url=" + RedisServer.shared().url(),
        "--ratelimit.redis.key-prefix=gw-demo-" + UUID.randomUUID(), "--ratelimit.timeout=2s",
        "--ratelimit.redis.timeout=2s", "--ratelimit.policies.work.limit=3", "--ratelimit.policies.work.window=1h"));
    if (profile != null) {
      args.add("--spring.profiles.active=" + profile);
      args.addAll(List.of("--demo.replenish-rate=1", "--demo.burst-capacity=3", "--demo.requested-tokens=1"));
    }
    List<Integer> statuses = new ArrayList<>();
    try (ConfigurableApplicationContext app = SpringApplication.run(GatewayDemoApplication.class,
        args.toArray(String[]::new))) {
      int port = ((WebServerApplicationContext) app).getWebServer().getPort();
      for (int i = 0; i < n; i++) {
        HttpResponse<String> response = CLIENT.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + "/work?user=" + user)).timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() == 200) {
          assertThat(response.body()).isEqualTo("worked");
          if (profile == null) {
            assertThat(response.headers().firstValue("RateLimit-Policy")).hasValue("\"work\";q=3;w=3600");
          }
        }
        statuses.add(response.statusCode());
      }
    }
    return statuses;
  }

  @Test
  void theRouteIsLimitedByPolicy() throws Exception {
    assertThat(statuses(null, "ann-" + UUID.randomUUID(), 5)).containsExactly(200, 200, 200, 429, 429);
  }

  @Test
  void theRedisRateLimiterProfileRoutesThroughTheGatewaysOwnLimiter() throws Exception {
    // a burst of 3, a token a second: at most one more in the time the five requests take
    List<Integer> statuses = statuses("redis-rate-limiter", "bob-" + UUID.randomUUID(), 5);
    assertThat(statuses.subList(0, 3)).containsExactly(200, 200, 200);
    assertThat(statuses).contains(429);
  }
}

package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.ManualClock;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;

/**
 * A gateway route limited by two policies of different algorithms, all or nothing, over real HTTP:
 * the client calls the gateway on Reactor Netty, which forwards to a real backend server.
 */
class GatewayRouteTest {
  private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private static DisposableServer backend;
  /** The backend's own threads: a gateway context shuts Reactor Netty's global ones down when it closes. */
  private static LoopResources backendLoops;

  @BeforeAll
  static void startBackend() {
    backendLoops = LoopResources.create("backend", 1, true);
    backend = HttpServer.create().host("127.0.0.1").port(0).runOn(backendLoops)
        .handle((request, response) -> response.sendString(Mono.just("backend " + request.uri())))
        .bindNow(Duration.ofSeconds(10));
  }

  @AfterAll
  static void stopBackend() {
    backend.disposeNow(Duration.ofSeconds(10));
    backendLoops.disposeLater().block(Duration.ofSeconds(10));
  }

  private static ConfigurableApplicationContext gateway(String... more) {
    List<String> properties = new ArrayList<>(List.of("server.port=0", "server.address=127.0.0.1",
        "ratelimit.policies.per-second.limit=2", "ratelimit.policies.per-second.window=1s",
        "ratelimit.policies.per-minute.limit=3", "ratelimit.policies.per-minute.window=1m",
        "ratelimit.policies.per-minute.algorithm=SLIDING_WINDOW",
        "spring.cloud.gateway.server.webflux.routes[0].id=api",
        "spring.cloud.gateway.server.webflux.routes[0].uri=http://127.0.0.1:" + backend.port(),
        "spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/api/**",
        "spring.cloud.gateway.server.webflux.routes[0].filters[0].name=RequestRateLimiter",
        "spring.cloud.gateway.server.webflux.routes[0].filters[0].args.ratelimit.policies=per-second,per-minute",
        "spring.cloud.gateway.server.webflux.routes[0].filters[0].args.key-resolver=#{@clientKeyResolver}"));
    properties.addAll(List.of(more));
    return new SpringApplicationBuilder(GatewayApp.class).web(WebApplicationType.REACTIVE)
        .properties(properties.toArray(String[]::new)).run();
  }

  private static HttpResponse<String> get(ConfigurableApplicationContext gateway, String path, String client)
      throws Exception {
    int port = ((WebServerApplicationContext) gateway).getWebServer().getPort();
    return CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .header("X-Client", client).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  @Test
  void aRouteIsLimitedByEveryPolicyTogetherWithTheIetfHeaders() throws Exception {
    try (ConfigurableApplicationContext gateway = gateway()) {
      assertThat(gateway.getBean(org.springframework.cloud.gateway.filter.ratelimit.RateLimiter.class))
          .isInstanceOf(PolicyRateLimiter.class);
      ManualClock clock = gateway.getBean(ManualClock.class);
      HttpResponse<String> first = get(gateway, "/api/items", "a");
      assertThat(first.statusCode()).isEqualTo(200);
      assertThat(first.body()).isEqualTo("backend /api/items");
      assertThat(first.headers().firstValue("RateLimit-Policy"))
          .hasValue("\"per-second\";q=2;w=1, \"per-minute\";q=3;w=60");
      assertThat(first.headers().firstValue("RateLimit")).hasValueSatisfying(v -> assertThat(v)
          .startsWith("\"per-second\";r=1;t=1, \"per-minute\";r=2;"));
      assertThat(get(gateway, "/api/items", "a").statusCode()).isEqualTo(200);

      HttpResponse<String> perSecond = get(gateway, "/api/items", "a");
      assertThat(perSecond.statusCode()).isEqualTo(429);
      assertThat(perSecond.headers().firstValue("Retry-After")).hasValue("1");
      assertThat(perSecond.headers().firstValue("RateLimit")).hasValueSatisfying(v -> assertThat(v)
          .startsWith("\"per-second\";r=0;t=1"));
      assertThat(get(gateway, "/api/items", "b").statusCode()).as("another client, its own keys").isEqualTo(200);

      clock.advance(Duration.ofSeconds(1));
      assertThat(get(gateway, "/api/items", "a").statusCode()).as("the denial consumed nothing").isEqualTo(200);
      clock.advance(Duration.ofSeconds(1));
      HttpResponse<String> perMinute = get(gateway, "/api/items", "a");
      assertThat(perMinute.statusCode()).as("the sliding window has no room").isEqualTo(429);
      assertThat(perMinute.headers().firstValue("RateLimit")).hasValueSatisfying(v -> assertThat(v)
          .contains("\"per-minute\";r=0"));
      assertThat(Long.parseLong(perMinute.headers().firstValue("Retry-After").orElseThrow())).isGreaterThan(1);
    }
  }

  @Test
  void aFailingBackendIsDecidedByTheFailureModeWithoutLimitHeaders() throws Exception {
    int deadPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      deadPort = socket.getLocalPort(); // closed again: nothing listens there
    }
    String[] deadRedis = {"ratelimit.backend=redis", "ratelimit.redis.url=redis://127.0.0.1:" + deadPort,
        "ratelimit.redis.timeout=300ms", "ratelimit.timeout=300ms"};
    try (ConfigurableApplicationContext gateway = gateway(concat(deadRedis, "ratelimit.failure-mode=FAIL_CLOSED"))) {
      HttpResponse<String> denied = get(gateway, "/api/items", "a");
      assertThat(denied.statusCode()).isEqualTo(429);
      assertThat(denied.headers().firstValue("Retry-After")).hasValue("1");
      assertThat(denied.headers().firstValue("RateLimit")).isEmpty();
      assertThat(denied.headers().firstValue("RateLimit-Policy")).isEmpty();
    }
    try (ConfigurableApplicationContext gateway = gateway(concat(deadRedis, "ratelimit.failure-mode=FAIL_OPEN"))) {
      HttpResponse<String> allowed = get(gateway, "/api/items", "a");
      assertThat(allowed.statusCode()).isEqualTo(200);
      assertThat(allowed.body()).isEqualTo("backend /api/items");
      assertThat(allowed.headers().firstValue("RateLimit")).isEmpty();
    }
  }

  private static String[] concat(String[] a, String b) {
    String[] all = java.util.Arrays.copyOf(a, a.length + 1);
    all[a.length] = b;
    return all;
  }
}

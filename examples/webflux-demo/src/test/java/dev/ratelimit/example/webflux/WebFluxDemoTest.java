package dev.ratelimit.example.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.tck.redis.RedisServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/** The example as it runs, on Reactor Netty, over real HTTP: in memory, and on Redis. */
class WebFluxDemoTest {
  /** 5 an hour: no refill during the test, however slow the machine (100 a minute refills one every 0.6 s). */
  private static final String[] SMALL_WORK = {"--ratelimit.policies.work.limit=5", "--ratelimit.policies.work.window=1h"};
  private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  private static HttpResponse<String> get(ConfigurableApplicationContext app, String path) throws Exception {
    int port = ((WebServerApplicationContext) app).getWebServer().getPort();
    return CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static void assertLimits(ConfigurableApplicationContext app) throws Exception {
    for (int i = 0; i < 5; i++) {
      assertThat(get(app, "/work?user=ann").statusCode()).isEqualTo(200);
    }
    HttpResponse<String> denied = get(app, "/work?user=ann");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(denied.body()).contains("\"violated-policies\":[\"work\"]");
    HttpResponse<String> other = get(app, "/work?user=bob");
    assertThat(other.statusCode()).as("another user, another bucket").isEqualTo(200);
    assertThat(other.body()).isEqualTo("done for bob");
    assertThat(other.headers().firstValue("RateLimit-Policy")).hasValue("\"work\";q=5;w=3600");

    for (int i = 0; i < 3; i++) {
      assertThat(get(app, "/greet/cid").body()).isEqualTo("hello cid");
    }
    HttpResponse<String> greetDenied = get(app, "/greet/cid");
    assertThat(greetDenied.statusCode()).isEqualTo(429);
    assertThat(greetDenied.headers().firstValue("Retry-After")).isPresent();
    assertThat(greetDenied.body()).contains("\"violated-policies\":[\"greetings\"]");
  }

  @Test
  void inMemory() throws Exception {
    try (ConfigurableApplicationContext app = SpringApplication.run(WebFluxDemoApplication.class,
        "--server.port=0", "--server.address=127.0.0.1", SMALL_WORK[0], SMALL_WORK[1])) {
      assertLimits(app);
    }
  }

  @Test
  void onRedis() throws Exception {
    try (ConfigurableApplicationContext app = SpringApplication.run(WebFluxDemoApplication.class,
        "--server.port=0", "--server.address=127.0.0.1", SMALL_WORK[0], SMALL_WORK[1], "--ratelimit.redis.url=" + RedisServer.shared().url(),
        "--ratelimit.redis.key-prefix=webflux-demo-" + UUID.randomUUID(), "--ratelimit.timeout=2s",
        "--ratelimit.redis.timeout=2s")) {
      assertThat(app.getBean(dev.ratelimit.spi.Backend.class).getClass().getSimpleName()).contains("Redis");
      assertLimits(app);
    }
  }
}

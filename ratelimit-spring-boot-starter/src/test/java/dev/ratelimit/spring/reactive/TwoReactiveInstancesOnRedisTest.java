package dev.ratelimit.spring.reactive;

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
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Two WebFlux instances (two application contexts, two Netty servers) on one Redis share one limit
 * exactly: requests alternating between them are admitted up to the limit, not twice it, by the
 * filter and by a reactive {@code @RateLimited} method alike.
 */
class TwoReactiveInstancesOnRedisTest {
  private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  private static ConfigurableApplicationContext instance(String prefix) {
    return new SpringApplicationBuilder(ReactiveApp.class).web(WebApplicationType.REACTIVE)
        .properties("server.port=0", "server.address=127.0.0.1",
            "ratelimit.backend=redis", "ratelimit.redis.url=" + RedisServer.shared().url(),
            "ratelimit.redis.key-prefix=" + prefix, "ratelimit.redis.timeout=2s", "ratelimit.timeout=2s",
            "ratelimit.policies.api.limit=7", "ratelimit.policies.api.window=1h",
            "ratelimit.filter.rules[0].name=api", "ratelimit.filter.rules[0].paths=/api/**",
            "ratelimit.filter.rules[0].policies=api")
        .run();
  }

  private static int status(ConfigurableApplicationContext instance, String path) throws Exception {
    int port = ((WebServerApplicationContext) instance).getWebServer().getPort();
    return CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  @Test
  void twoInstancesShareOneLimitExactly() throws Exception {
    String prefix = "rl-two-" + UUID.randomUUID();
    try (ConfigurableApplicationContext a = instance(prefix); ConfigurableApplicationContext b = instance(prefix)) {
      List<Integer> filter = new ArrayList<>();
      List<Integer> annotated = new ArrayList<>();
      for (int i = 0; i < 12; i++) {
        filter.add(status(i % 2 == 0 ? a : b, "/api/hello"));
        annotated.add(status(i % 2 == 0 ? b : a, "/greet/shared"));
      }
      assertThat(filter).containsExactly(200, 200, 200, 200, 200, 200, 200, 429, 429, 429, 429, 429);
      assertThat(annotated).as("greet: 2 per minute, whichever instance serves")
          .containsExactly(200, 200, 429, 429, 429, 429, 429, 429, 429, 429, 429, 429);
    }
  }
}

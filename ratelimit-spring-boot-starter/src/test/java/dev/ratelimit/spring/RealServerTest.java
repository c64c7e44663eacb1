package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.RateLimiter;
import dev.ratelimit.tck.redis.RedisServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The starter in a real server on a random port: filter rules from properties, annotations, and two
 * instances sharing one limit through Redis.
 */
class RealServerTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private static ConfigurableApplicationContext start(String... properties) {
    List<String> all = new ArrayList<>(List.of("server.port=0",
        "ratelimit.policies.open.limit=3", "ratelimit.policies.open.window=1m",
        "ratelimit.filter.rules[0].name=open",
        "ratelimit.filter.rules[0].paths=/open/**",
        "ratelimit.filter.rules[0].methods=GET",
        "ratelimit.filter.rules[0].policies=open",
        "ratelimit.filter.rules[0].key=#clientIp"));
    all.addAll(List.of(properties));
    return new SpringApplicationBuilder(WebApp.class).properties(all.toArray(String[]::new)).run();
  }

  private static HttpResponse<String> get(ConfigurableApplicationContext context, String path) throws Exception {
    int port = ((WebServerApplicationContext) context).getWebServer().getPort();
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void filterRulesFromPropertiesLimitARealServer() throws Exception {
    try (ConfigurableApplicationContext app = start()) {
      for (int i = 0; i < 3; i++) {
        HttpResponse<String> ok = get(app, "/open/" + i);
        assertThat(ok.statusCode()).isEqualTo(200);
        assertThat(ok.headers().firstValue("RateLimit-Policy")).hasValue("\"open\";q=3;w=60");
      }
      HttpResponse<String> denied = get(app, "/open/x");
      assertThat(denied.statusCode()).isEqualTo(429);
      assertThat(denied.headers().firstValue("Retry-After")).hasValue("20");
      assertThat(denied.headers().firstValue("Content-Type")).hasValueSatisfying(
          v -> assertThat(v).startsWith("application/problem+json"));
      assertThat(denied.body()).contains("\"violated-policies\"").contains("\"open\"");
      assertThat(get(app, "/hello/real").statusCode()).as("other paths are not filtered").isEqualTo(200);
    }
  }

  @Test
  void twoInstancesShareOneLimitThroughRedis() throws Exception {
    String prefix = "starter-shared-" + System.nanoTime();
    String[] redis = {"ratelimit.backend=redis", "ratelimit.redis.url=" + RedisServer.shared().url(),
        "ratelimit.redis.key-prefix=" + prefix};
    try (ConfigurableApplicationContext a = start(redis); ConfigurableApplicationContext b = start(redis)) {
      RedisWarmUp.warmUp(a.getBean(RateLimiter.class));
      RedisWarmUp.warmUp(b.getBean(RateLimiter.class));
      int allowed = 0;
      for (int i = 0; i < 10; i++) {
        HttpResponse<String> response = get(i % 2 == 0 ? a : b, "/open/" + i);
        allowed += response.statusCode() == 200 ? 1 : 0;
      }
      assertThat(allowed).as("3 per minute per client IP, across both instances").isEqualTo(3);
      int annotated = 0;
      for (int i = 0; i < 6; i++) {
        annotated += get(i % 2 == 0 ? a : b, "/hello/shared").statusCode() == 200 ? 1 : 0;
      }
      assertThat(annotated).as("@RateLimited: 2 per minute per user, across both instances").isEqualTo(2);
    }
  }
}

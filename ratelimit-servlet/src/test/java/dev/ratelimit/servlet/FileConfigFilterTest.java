package dev.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.RateLimiter;
import dev.ratelimit.tck.http.StructuredFields;
import dev.ratelimit.tck.redis.RedisServer;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import java.io.IOException;
import java.lang.reflect.Proxy;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The no-arg filter, configured by its init-param "config", in a real Jetty. */
class FileConfigFilterTest {
  @TempDir
  Path dir;

  @Test
  void propertiesFileWithTheMemoryBackend() throws IOException {
    Path file = Files.writeString(dir.resolve("ratelimit.properties"), """
        ratelimit.backend=memory
        ratelimit.headers.legacy=true
        ratelimit.rules[0].name=api
        ratelimit.rules[0].paths=/api/**
        ratelimit.rules[0].methods=GET
        ratelimit.rules[0].key=#headers['X-Api-Key'] ?: #clientIp
        ratelimit.rules[0].policies[0].name=per-key
        ratelimit.rules[0].policies[0].limit=2/1h
        """);
    try (TestServer server = TestServer.withConfig(Map.of("config", file.toString()))) {
      HttpResponse<String> first = server.get("/api/x", "X-Api-Key", "k");
      assertThat(first.statusCode()).isEqualTo(200);
      assertThat(first.headers().firstValue("RateLimit-Policy")).hasValue("\"per-key\";q=2;w=3600");
      assertThat(first.headers().firstValue("X-RateLimit-Remaining")).hasValue("1");
      assertThat(server.get("/api/x", "X-Api-Key", "k").statusCode()).isEqualTo(200);
      HttpResponse<String> denied = server.get("/api/y", "X-Api-Key", "k");
      assertThat(denied.statusCode()).isEqualTo(429);
      assertThat(Json.object(denied.body()).get("violated-policies")).isEqualTo(List.of("per-key"));
      assertThat(server.get("/api/x", "X-Api-Key", "other").statusCode()).isEqualTo(200);
      assertThat(server.send("POST", "/api/x", "X-Api-Key", "k").statusCode()).isEqualTo(200);
    }
  }

  @Test
  void yamlFileOnTheClasspath() {
    try (TestServer server = TestServer.withConfig(Map.of("config", "classpath:ratelimit-test.yml"))) {
      // match: all, missing-key: reject; the api rule is keyed on X-Api-Key
      assertThat(server.get("/api/x").statusCode()).isEqualTo(400);
      HttpResponse<String> r = server.get("/api/x?n=3", "X-Api-Key", "k");
      assertThat(r.statusCode()).isEqualTo(200);
      List<StructuredFields.Member> items = StructuredFields.parseList(r.headers().firstValue("RateLimit").orElseThrow());
      assertThat(items).extracting(StructuredFields.Member::value).containsExactly("per-key", "per-key-daily");
      assertThat(items).extracting(i -> i.integer("r")).containsExactly(2L, 997L); // burst 5 - 3, 1000 - 3
      assertThat(r.headers().firstValue("X-RateLimit-Remaining")).hasValue("2");
      assertThat(server.send("POST", "/login").statusCode()).isEqualTo(200);
      assertThat(server.send("POST", "/login").statusCode()).isEqualTo(200);
      assertThat(server.send("POST", "/login").statusCode()).isEqualTo(429);
      assertThat(server.get("/login").statusCode()).isEqualTo(200); // the login rule is POST only
    }
  }

  @Test
  void redisBackendSharesTheLimitAcrossFilters() throws IOException {
    RedisServer redis = RedisServer.shared();
    String prefix = "rltest-servlet-" + UUID.randomUUID().toString().substring(0, 8);
    Path file = Files.writeString(dir.resolve("redis.properties"), """
        ratelimit.backend=redis
        ratelimit.redis.url=%s
        ratelimit.redis.key-prefix=%s
        ratelimit.redis.timeout=2s
        ratelimit.timeout=3s
        ratelimit.failure-mode=FAIL_CLOSED
        ratelimit.rules[0].name=shared
        ratelimit.rules[0].paths=/**
        ratelimit.rules[0].policies[0].name=per-ip
        ratelimit.rules[0].policies[0].limit=3/1h
        """.formatted(redis.url(), prefix));
    try (TestServer a = TestServer.withConfig(Map.of("config", file.toString()));
        TestServer b = TestServer.withConfig(Map.of("config", file.toString()))) {
      HttpResponse<String> first = a.get("/x");
      assertThat(first.statusCode()).isEqualTo(200);
      assertThat(StructuredFields.parseList(first.headers().firstValue("RateLimit").orElseThrow()).get(0).integer("r"))
          .isEqualTo(2);
      assertThat(b.get("/x").statusCode()).isEqualTo(200);
      HttpResponse<String> third = a.get("/x");
      assertThat(third.statusCode()).isEqualTo(200);
      assertThat(StructuredFields.parseList(third.headers().firstValue("RateLimit").orElseThrow()).get(0).integer("r"))
          .isZero();
      HttpResponse<String> denied = b.get("/x");
      assertThat(denied.statusCode()).isEqualTo(429);
      assertThat(denied.headers().firstValue("RateLimit")).isPresent(); // a real Redis answer, not the failure mode
      assertThat(Long.parseLong(denied.headers().firstValue("Retry-After").orElseThrow())).isBetween(1190L, 1200L);
      assertThat(a.get("/x").statusCode()).isEqualTo(429);
      @SuppressWarnings("unchecked")
      List<Object> keys = (List<Object>) redis.command("KEYS", prefix + ":*");
      assertThat(keys).containsExactly(prefix + ":{shared%003A127.0.0.1}:per-ip:gcra");
    } finally {
      @SuppressWarnings("unchecked")
      List<Object> keys = (List<Object>) redis.command("KEYS", prefix + ":*");
      for (Object key : keys) {
        redis.command("DEL", key);
      }
    }
  }

  @Test
  void aMissingInitParamStopsTheContext() {
    assertThatThrownBy(() -> TestServer.withConfig(Map.of()))
        .hasStackTraceContaining("needs the init-param 'config'");
  }

  @Test
  void aBadFileStopsTheContextNamingTheProperty() throws IOException {
    Path file = Files.writeString(dir.resolve("bad.properties"), """
        ratelimit.rules[0].name=api
        ratelimit.rules[0].paths=/api/**
        ratelimit.rules[0].policies[0].limit=100/1m
        ratelimit.rules[0].policies[0].algoritm=GCRA
        """);
    assertThatThrownBy(() -> TestServer.withConfig(Map.of("config", file.toString())))
        .hasStackTraceContaining("ratelimit.rules[0].policies[0].algoritm: unknown property");
  }

  @Test
  void initAndDestroyWithoutAContainer() throws Exception {
    Path file = Files.writeString(dir.resolve("ok.properties"), """
        ratelimit.rules[0].name=api
        ratelimit.rules[0].paths=/api/**
        ratelimit.rules[0].policies[0].limit=100/1m
        """);
    RateLimitFilter filter = new RateLimitFilter();
    assertThatThrownBy(() -> filter.doFilter(Stubs.request("192.0.2.1"), new Stubs.Response().proxy, (q, s) -> { }))
        .isInstanceOf(ServletException.class).hasMessageContaining("not initialised");
    filter.init(filterConfig(Map.of("config", file.toString())));
    filter.destroy();
    filter.destroy(); // idempotent
    assertThatThrownBy(() -> filter.doFilter(Stubs.request("192.0.2.1"), new Stubs.Response().proxy, (q, s) -> { }))
        .as("not checked on the closed limiter").isInstanceOf(ServletException.class).hasMessageContaining("not initialised");
    filter.init(filterConfig(Map.of("config", file.toString()))); // a restarted context reuses the instance
    assertThat(filter.ruleNames()).containsExactly("api");
    filter.destroy();

    try (RateLimiter limiter = RateLimiter.inMemory()) {
      RateLimitFilter built = RateLimitConfig.load(file.toString()).filterBuilder(limiter).build();
      assertThatThrownBy(() -> built.init(filterConfig(Map.of("config", file.toString()))))
          .isInstanceOf(ServletException.class).hasMessageContaining("was built in code");
      built.init(filterConfig(Map.of()));
    }
  }

  private static FilterConfig filterConfig(Map<String, String> params) {
    return (FilterConfig) Proxy.newProxyInstance(FilterConfig.class.getClassLoader(), new Class<?>[] {FilterConfig.class},
        (proxy, method, args) -> switch (method.getName()) {
          case "getFilterName" -> "rateLimit";
          case "getInitParameter" -> params.get((String) args[0]);
          case "getInitParameterNames" -> Collections.enumeration(params.keySet());
          case "getServletContext" -> (ServletContext) null;
          default -> null;
        });
  }
}

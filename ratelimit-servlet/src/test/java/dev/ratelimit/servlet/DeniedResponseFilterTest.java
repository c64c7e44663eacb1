package dev.ratelimit.servlet;

import dev.ratelimit.http.DeniedResponse;
import dev.ratelimit.http.HeaderOptions;
import dev.ratelimit.http.RateLimitRule;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.ManualClock;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The configured 429 over real HTTP (Jetty): per rule, for the whole filter, from files, and the default. */
class DeniedResponseFilterTest {
  private final RateLimiter limiter = RateLimiter.builder().clock(ManualClock.at(Instant.ofEpochSecond(1_700_000_000)))
      .build();
  private TestServer server;

  @TempDir
  Path dir;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
    limiter.close();
  }

  private static RateLimitRule.Builder rule(String name, String path) {
    return RateLimitRule.builder(name).path(path).policy(Policy.of(1, Duration.ofMinutes(1)).withName(name + "-policy"));
  }

  /** The second request to {@code path}: the first uses the one unit. */
  private HttpResponse<String> denied(String path) {
    assertThat(server.get(path).statusCode()).isEqualTo(200);
    return server.get(path);
  }

  @Test
  void theDefaultIsUnchanged() {
    server = TestServer.with(RateLimitFilter.builder(limiter).rule(rule("api", "/api/**").build()).build());
    HttpResponse<String> r = denied("/api/x");
    assertThat(r.statusCode()).isEqualTo(429);
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(r.headers().firstValue("Retry-After")).hasValue("60");
    assertThat(Json.object(r.body())).containsEntry("status", 429L)
        .containsEntry("violated-policies", List.of("api-policy"));
  }

  @Test
  void aRulesResponseWinsOverTheFiltersWhichWinsOverTheDefault() {
    DeniedResponse global = DeniedResponse.builder().contentType("application/json")
        .body("{\"error\":\"rate_limited\",\"policy\":\"{{policy}}\",\"retry_in\":{{retry-after}}}").build();
    DeniedResponse legacy = DeniedResponse.builder().status(503).contentType("text/plain")
        .body("busy, retry in {{retry-after}} s").header("X-Legacy", "yes").build();
    server = TestServer.with(RateLimitFilter.builder(limiter)
        .rule(rule("legacy", "/legacy/**").deniedResponse(legacy).build())
        .rule(rule("api", "/api/**").build())
        .deniedResponse(global).build());

    HttpResponse<String> api = denied("/api/x");
    assertThat(api.statusCode()).isEqualTo(429);
    assertThat(api.headers().firstValue("Content-Type")).hasValue("application/json");
    assertThat(Json.object(api.body())).containsEntry("error", "rate_limited").containsEntry("policy", "api-policy")
        .containsEntry("retry_in", 60L);
    assertThat(api.headers().firstValue("RateLimit")).hasValue("\"api-policy\";r=0;t=60");

    HttpResponse<String> old = denied("/legacy/x");
    assertThat(old.statusCode()).isEqualTo(503);
    assertThat(old.body()).isEqualTo("busy, retry in 60 s");
    assertThat(old.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/plain");
    assertThat(old.headers().firstValue("X-Legacy")).hasValue("yes");
    assertThat(old.headers().firstValue("Retry-After")).hasValue("60");
    assertThat(old.headers().firstValue("Cache-Control")).hasValue("no-store");
  }

  @Test
  void aHandlerIsGivenTheConfiguredResponseAndMayWriteIt() {
    List<String> seen = new ArrayList<>();
    DeniedResponse legacy = DeniedResponse.builder().status(503).build();
    server = TestServer.with(RateLimitFilter.builder(limiter)
        .rule(rule("legacy", "/legacy/**").deniedResponse(legacy).build())
        .deniedHandler(new DeniedHandler() {
          @Override
          public void handle(HttpServletRequest request, HttpServletResponse response, MultiDecision decision,
              DeniedResponse configured) throws IOException {
            seen.add(configured.status() + " " + decision.limiting().policy().name());
            RateLimitResponses.writeDenied(request, response, decision.decisions(), HeaderOptions.DEFAULT, configured);
          }

          @Override
          public void handle(HttpServletRequest request, HttpServletResponse response, MultiDecision decision) {
            throw new AssertionError("the filter calls the method given the configured response");
          }
        }).build());
    HttpResponse<String> r = denied("/legacy/x");
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(Json.object(r.body())).containsEntry("status", 503L);
    assertThat(seen).containsExactly("503 legacy-policy");
  }

  @Test
  void fromAPropertiesFileARulesPropertiesOverrideTheGlobalOnes() throws IOException {
    Path file = Files.writeString(dir.resolve("ratelimit.properties"), """
        ratelimit.denied-response.content-type=application/json
        ratelimit.denied-response.body={"error":"rate_limited","policy":"{{policy}}","retry_in":{{retry-after}}}
        ratelimit.denied-response.headers.X-Error-Code=RL-1
        ratelimit.rules[0].name=legacy
        ratelimit.rules[0].paths=/legacy/**
        ratelimit.rules[0].denied-response.status=503
        ratelimit.rules[0].denied-response.headers.X-Legacy=yes
        ratelimit.rules[0].policies[0].name=legacy-policy
        ratelimit.rules[0].policies[0].limit=1/1m
        ratelimit.rules[1].name=api
        ratelimit.rules[1].paths=/api/**
        ratelimit.rules[1].policies[0].name=api-policy
        ratelimit.rules[1].policies[0].limit=1/1m
        """);
    server = TestServer.withConfig(Map.of("config", file.toString()));
    HttpResponse<String> api = denied("/api/x");
    assertThat(api.statusCode()).isEqualTo(429);
    assertThat(api.headers().firstValue("X-Error-Code")).hasValue("RL-1");
    assertThat(api.headers().firstValue("X-Legacy")).isEmpty();
    assertThat(Json.object(api.body())).containsEntry("policy", "api-policy").containsEntry("retry_in", 60L);

    HttpResponse<String> legacy = denied("/legacy/x");
    assertThat(legacy.statusCode()).isEqualTo(503);
    assertThat(legacy.headers().firstValue("Content-Type")).hasValue("application/json");
    assertThat(legacy.headers().firstValue("X-Error-Code")).hasValue("RL-1");
    assertThat(legacy.headers().firstValue("X-Legacy")).hasValue("yes");
    assertThat(Json.object(legacy.body())).containsEntry("policy", "legacy-policy");
  }

  @Test
  void fromAYamlFile() throws IOException {
    Path file = Files.writeString(dir.resolve("ratelimit.yml"), """
        ratelimit:
          denied-response:
            status: 503
            content-type: text/html
            body: "<p>Slow down ({{policy}}), retry in {{retry-after}} s.</p>"
          rules:
            - name: api
              paths: /api/**
              policies:
                - { name: "<api>", limit: 1/1m }
        """);
    server = TestServer.withConfig(Map.of("config", file.toString()));
    HttpResponse<String> r = denied("/api/x");
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.body()).isEqualTo("<p>Slow down (&lt;api&gt;), retry in 60 s.</p>");
  }
}

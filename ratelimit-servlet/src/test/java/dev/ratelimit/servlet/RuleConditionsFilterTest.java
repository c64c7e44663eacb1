package dev.ratelimit.servlet;

import dev.ratelimit.http.RateLimitRule;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.tck.docs.DocPage;
import dev.ratelimit.tck.http.StructuredFields;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A rule's {@code when} and {@code skip-when}, over HTTP in Jetty: in code and from the file. */
class RuleConditionsFilterTest {
  private final ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
  private final RateLimiter limiter = RateLimiter.builder().clock(clock).build();
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

  private static Policy twoAMinute(String name) {
    return Policy.of(2, Duration.ofMinutes(1)).withName(name);
  }

  private static String policyOf(HttpResponse<String> response) {
    return response.headers().firstValue("RateLimit")
        .map(h -> String.valueOf(StructuredFields.parseList(h).get(0).value())).orElse(null);
  }

  @Test
  void skipWhenLeavesHealthChecksAndInternalCallersUncounted() {
    server = TestServer.with(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("all")
            .path("/**")
            .policy(twoAMinute("per-ip"))
            .skipWhen("#path == '/health' or #headers['X-Internal'] == 'batch'")
            .build())
        .build());
    for (int i = 0; i < 5; i++) {
      HttpResponse<String> health = server.get("/health");
      assertThat(health.statusCode()).isEqualTo(200);
      assertThat(health.headers().firstValue("RateLimit")).as("not checked").isEmpty();
      assertThat(server.get("/orders", "X-Internal", "batch").statusCode()).isEqualTo(200);
    }
    assertThat(server.get("/orders").statusCode()).isEqualTo(200);
    assertThat(server.get("/orders").statusCode()).isEqualTo(200);
    assertThat(server.get("/orders").statusCode()).as("the skipped ones counted nothing").isEqualTo(429);
    assertThat(server.get("/orders", "X-Internal", "other").statusCode()).isEqualTo(429);
  }

  @Test
  void whenLimitsOnlyTheRequestsItHolds() {
    server = TestServer.with(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("free")
            .path("/api/**")
            .policy(twoAMinute("free-tier"))
            .when("#params['plan'] == 'free'")
            .build())
        .build());
    for (int i = 0; i < 4; i++) {
      assertThat(server.get("/api/x?plan=pro").statusCode()).isEqualTo(200);
    }
    assertThat(server.get("/api/x?plan=free").statusCode()).isEqualTo(200);
    assertThat(server.get("/api/x?plan=free").statusCode()).isEqualTo(200);
    assertThat(server.get("/api/x?plan=free").statusCode()).isEqualTo(429);
    assertThat(server.get("/api/x?plan=pro").statusCode()).isEqualTo(200);
  }

  /** With first-match, a rule its condition leaves out is passed over as one whose path does not match. */
  @Test
  void aRuleLeftOutLetsTheNextOneMatch() {
    server = TestServer.with(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("partners").path("/api/**").policy(twoAMinute("partners"))
            .key("#headers['X-Partner']").when("#headers['X-Partner'] != null").build())
        .rule(RateLimitRule.builder("everyone").path("/**").policy(twoAMinute("everyone")).build())
        .build());
    assertThat(policyOf(server.get("/api/x", "X-Partner", "acme"))).isEqualTo("partners");
    assertThat(policyOf(server.get("/api/x"))).isEqualTo("everyone");
  }

  @Test
  void aConditionThatCannotBeDecidedLeavesTheRuleApplyingAndIsLogged() {
    try (RateLimitFilterTest.LogCapture log = new RateLimitFilterTest.LogCapture()) {
      server = TestServer.with(RateLimitFilter.builder(limiter)
          .rule(RateLimitRule.builder("api").path("/**").policy(twoAMinute("api"))
              .skipWhen("#request.userPrincipal.name == 'monitor'") // no user: it fails
              .build())
          .build());
      assertThat(server.get("/a").statusCode()).isEqualTo(200);
      assertThat(server.get("/a").statusCode()).isEqualTo(200);
      assertThat(server.get("/a").statusCode()).as("the rule applied").isEqualTo(429);
      assertThat(log.messages()).filteredOn(m -> m.contains("skip-when")).singleElement().asString()
          .startsWith("rule 'api': skip-when expression '#request.userPrincipal.name == 'monitor'' failed (")
          .endsWith("; taken as false: the rule applied (logged at most once a minute)");
    }
  }

  @Test
  void conditionsAreCheckedWhenTheRuleIsBuilt() {
    RateLimitRule.Builder rule = RateLimitRule.builder("api").path("/**").policy(twoAMinute("api"));
    assertThatThrownBy(() -> rule.when("#nope == 1").build()).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("rule 'api': when expression '#nope == 1' reads #nope, an unknown variable");
    assertThatThrownBy(() -> rule.when(null).skipWhen("'yes'").build()).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("rule 'api': skip-when expression ''yes'' gives yes, not true or false");
    assertThatThrownBy(() -> rule.skipWhen("T(java.lang.System).exit(1) == null").build())
        .hasMessageContaining("type references T(...) are not allowed");
    assertThatThrownBy(() -> rule.skipWhen("#response.status >= 400").build())
        .as("the response is count-when's alone").hasMessageContaining("#response, an unknown variable");
  }

  /** The example of docs/servlet-filter.md, from the file (the test's client is the trusted proxy of 10.0.0.7). */
  @Test
  void thePagesExampleFromTheFile() throws Exception {
    String block = DocPage.read("docs/servlet-filter.md").block("properties", "skip-when");
    Path file = Files.writeString(dir.resolve("ratelimit.properties"), block + "ratelimit.trusted-proxies=127.0.0.1/32\n");
    RateLimitConfig config = RateLimitConfig.load(file.toString());
    assertThat(config.rules().get(0).when()).isEqualTo("#params['plan'] == 'free'");
    assertThat(config.rules().get(1).skipWhen()).isEqualTo("#path == '/health' or #clientIp == '10.0.0.7'");
    server = TestServer.withConfig(Map.of("config", file.toString()));
    assertThat(policyOf(server.get("/api/x?plan=free"))).isEqualTo("free");
    assertThat(policyOf(server.get("/api/x?plan=pro"))).as("left out by free-plan").isEqualTo("per-ip");
    assertThat(server.get("/api/x?plan=free").statusCode()).isEqualTo(200);
    assertThat(server.get("/api/x?plan=free").statusCode()).isEqualTo(429);
    HttpResponse<String> health = server.get("/health");
    assertThat(health.statusCode()).isEqualTo(200);
    assertThat(health.headers().firstValue("RateLimit")).isEmpty();
    HttpResponse<String> internal = server.get("/orders", "X-Forwarded-For", "10.0.0.7");
    assertThat(internal.headers().firstValue("RateLimit")).as("the internal caller").isEmpty();
    assertThat(policyOf(server.get("/orders", "X-Forwarded-For", "10.0.0.8"))).isEqualTo("per-ip");
  }

  /** A YAML file says the same as the properties one (quoted: YAML reads a leading # as a comment). */
  @Test
  void aYamlFileTakesTheConditions() throws Exception {
    Path properties = Files.writeString(dir.resolve("c.properties"), """
        ratelimit.rules[0].name=login
        ratelimit.rules[0].paths=/login
        ratelimit.rules[0].when=#method == 'POST'
        ratelimit.rules[0].skip-when=#clientIp == '10.0.0.7'
        ratelimit.rules[0].count-when=#response.status == 401
        ratelimit.rules[0].policies[0].limit=5/15m
        """);
    Path yaml = Files.writeString(dir.resolve("c.yaml"), """
        ratelimit:
          rules:
            - name: login
              paths: /login
              when: "#method == 'POST'"
              skip-when: "#clientIp == '10.0.0.7'"
              count-when: "#response.status == 401"
              policies:
                - limit: 5/15m
        """);
    RateLimitRule fromYaml = RateLimitConfig.load(yaml.toString()).rules().get(0);
    assertThat(fromYaml).isEqualTo(RateLimitConfig.load(properties.toString()).rules().get(0));
    assertThat(fromYaml.countWhen()).isEqualTo("#response.status == 401");
  }

  @Test
  void aBadConditionInTheFileIsNamedByItsProperty() {
    Path file = dir.resolve("bad.properties");
    assertThatThrownBy(() -> RateLimitConfig.load(Files.writeString(file, """
        ratelimit.rules[0].name=all
        ratelimit.rules[0].paths=/**
        ratelimit.rules[0].skip-when=#pth == '/health'
        ratelimit.rules[0].policies[0].limit=1/1m
        """).toString()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ratelimit.rules[0].skip-when: rule 'all': skip-when expression '#pth == '/health''"
            + " reads #pth, an unknown variable");
  }
}

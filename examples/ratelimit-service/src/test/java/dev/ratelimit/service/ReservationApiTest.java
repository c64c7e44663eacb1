package dev.ratelimit.service;

import static dev.ratelimit.service.Http.json;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.spring.PolicyRegistry;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import tools.jackson.databind.JsonNode;

/**
 * {@code /v1/reserve}, {@code /v1/commit} and {@code /v1/cancel} over real HTTP, in memory, on a
 * manual clock: a reservation settled once by its token; tokens truncated, altered, signed with
 * another secret, expired or replayed refused with a 400 naming the token, nothing given back.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {"ratelimit-service.reservations.secret=" + ReservationApiTest.SECRET,
        "ratelimit-service.reservations.ttl=10m", "ratelimit.policies.tokens.limit=100",
        "ratelimit.policies.tokens.window=1h", "ratelimit.policies.changing.limit=10",
        "ratelimit.policies.changing.window=1m"})
class ReservationApiTest {
  static final String SECRET = "0123456789abcdef0123456789abcdef";

  @TestConfiguration
  static class Clock {
    @Bean
    ManualClock clock() {
      return ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
    }
  }

  @LocalServerPort
  int port;
  @Autowired
  ManualClock clock;
  @Autowired
  RateLimiter limiter;
  @Autowired
  PolicyRegistry policies;
  Http http;

  @BeforeEach
  void setUp() {
    http = new Http(port);
  }

  private static String unique(String name) {
    return name + ":" + System.nanoTime();
  }

  private long room(String key) {
    return limiter.inspect(key, policies.find("tokens").orElseThrow()).remaining();
  }

  private String reserve(String key, long estimate) {
    HttpResponse<String> reserved = http.post("/v1/reserve", Map.of("key", key, "policy", "tokens", "estimate", estimate));
    assertThat(reserved.statusCode()).as(reserved.body()).isEqualTo(200);
    return json(reserved).get("token").asString();
  }

  private static void assertBadToken(HttpResponse<String> answer, String reason) {
    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(400);
    assertThat(answer.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    JsonNode param = json(answer).get("invalid-params").get(0);
    assertThat(param.get("name").asString()).isEqualTo("token");
    assertThat(param.get("reason").asString()).contains(reason);
  }

  @Test
  void aReservationIsTakenNowAndSettledOnceByItsToken() {
    String key = unique("llm");
    HttpResponse<String> reserved = http.post("/v1/reserve", Map.of("key", key, "policy", "tokens", "estimate", 40));
    assertThat(reserved.statusCode()).isEqualTo(200);
    JsonNode body = json(reserved);
    assertThat(body.get("allowed").asBoolean()).isTrue();
    assertThat(body.get("estimate").asLong()).isEqualTo(40);
    assertThat(body.get("decisions").get(0).get("remaining").asLong()).isEqualTo(60);
    assertThat(Instant.parse(body.get("expires_at").asString())).isEqualTo(clock.instant().plus(Duration.ofMinutes(10)));
    assertThat(reserved.headers().firstValue("RateLimit")).hasValue("\"tokens\";r=60;t=1440");
    assertThat(room(key)).isEqualTo(60);

    String token = body.get("token").asString();
    HttpResponse<String> committed = http.post("/v1/commit", Map.of("token", token, "actual", 15));
    assertThat(committed.statusCode()).as(committed.body()).isEqualTo(200);
    assertThat(json(committed).get("settled").asString()).isEqualTo("committed");
    assertThat(room(key)).as("25 given back").isEqualTo(85);

    assertBadToken(http.post("/v1/commit", Map.of("token", token, "actual", 1)), "already settled");
    assertBadToken(http.post("/v1/cancel", Map.of("token", token)), "already settled");
    assertThat(room(key)).as("a replay gives nothing back").isEqualTo(85);

    String second = reserve(key, 10);
    assertThat(http.post("/v1/cancel", Map.of("token", second)).statusCode()).isEqualTo(200);
    assertThat(room(key)).as("cancelled: all of it back").isEqualTo(85);
    String third = reserve(key, 10);
    assertThat(http.post("/v1/commit", Map.of("token", third, "actual", 200)).statusCode()).isEqualTo(200);
    assertThat(room(key)).as("charged beyond the limit: the work was done").isZero();
  }

  @Test
  void aRefusedReservationIs429WithoutATokenAndTakesNothing() {
    String key = unique("full");
    reserve(key, 90);
    HttpResponse<String> refused = http.post("/v1/reserve", Map.of("key", key, "policies", List.of("tokens"),
        "estimate", 20));
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(json(refused).has("token")).isFalse();
    assertThat(json(refused).get("violated-policies").get(0).asString()).isEqualTo("tokens");
    assertThat(refused.headers().firstValue("Retry-After")).isPresent();
    assertThat(room(key)).isEqualTo(10);
  }

  @Test
  void truncatedAlteredForeignAndExpiredTokensAreRefusedAndGiveNothingBack() {
    String key = unique("forged");
    String token = reserve(key, 30);
    assertThat(room(key)).isEqualTo(70);
    assertBadToken(http.post("/v1/cancel", Map.of("token", token.substring(0, 20))), "truncated");
    assertBadToken(http.post("/v1/cancel", Map.of("token", token.substring(0, token.length() - 3))),
        "signature does not match");
    byte[] bytes = Base64.getUrlDecoder().decode(token);
    bytes[30] ^= 1; // a bit of the payload: the estimate or the key
    assertBadToken(http.post("/v1/cancel", Map.of("token", Base64.getUrlEncoder().withoutPadding().encodeToString(bytes))),
        "signature does not match");
    assertBadToken(http.post("/v1/cancel", Map.of("token", "not a token!")), "not base64url");
    assertBadToken(http.post("/v1/cancel", Map.of("token", "")), "token is required");
    ReservationTokens foreign = new ReservationTokens("another-secret-another-secret-xx".getBytes(), Duration.ofMinutes(10),
        clock);
    Policy tokens = policies.find("tokens").orElseThrow();
    String forged = foreign.issue(limiter.resume(key, List.of(tokens), 30, List.of(new dev.ratelimit.spi.Mark(0, 0, 1))))
        .token();
    assertBadToken(http.post("/v1/cancel", Map.of("token", forged)), "another ratelimit-service.reservations.secret");
    assertThat(room(key)).as("nothing given back").isEqualTo(70);

    clock.advance(Duration.ofMinutes(10));
    assertBadToken(http.post("/v1/cancel", Map.of("token", token)), "expired at");
    assertThat(limiter.inspect(key, tokens).remaining()).as("an expired reservation stays charged")
        .isEqualTo(room(key));
  }

  @Test
  void aTokenOfAPolicyChangedSinceIsRefused() {
    String key = unique("changed");
    HttpResponse<String> reserved = http.post("/v1/reserve", Map.of("key", key, "policy", "changing", "estimate", 2));
    String token = json(reserved).get("token").asString();
    Policy before = policies.find("changing").orElseThrow();
    policies.update("changing", Policy.of(20, Duration.ofMinutes(1)).withName("changing"));
    try {
      assertBadToken(http.post("/v1/cancel", Map.of("token", token)), "policy 'changing' changed since");
    } finally {
      policies.update("changing", before);
    }
    assertThat(http.post("/v1/cancel", Map.of("token", token)).statusCode()).as("back as it was: it settles")
        .isEqualTo(200);
  }

  @Test
  void badEstimatesAndActualCostsAreRefusedNamingTheField() {
    String key = unique("bad");
    for (Object estimate : List.of(0, -3, 101, "ten", 1.5)) {
      HttpResponse<String> answer = http.post("/v1/reserve", Map.of("key", key, "policy", "tokens", "estimate", estimate));
      assertThat(answer.statusCode()).as("estimate %s", estimate).isEqualTo(400);
      assertThat(json(answer).get("invalid-params").get(0).get("name").asString()).isEqualTo("estimate");
    }
    HttpResponse<String> missing = http.post("/v1/reserve", Map.of("key", key, "policy", "tokens"));
    assertThat(json(missing).get("detail").asString()).startsWith("estimate is required");
    HttpResponse<String> both = http.post("/v1/reserve", Map.of("key", key, "policy", "tokens",
        "policies", List.of("tokens"), "estimate", 1));
    assertThat(json(both).get("detail").asString()).isEqualTo("give policy (one name) or policies (a list), not both");
    assertThat(room(key)).isEqualTo(100);

    String token = reserve(key, 5);
    for (Object actual : List.of(0, -1, (1L << 52) + 1, "five", 2.5)) {
      HttpResponse<String> answer = http.post("/v1/commit", Map.of("token", token, "actual", actual));
      assertThat(answer.statusCode()).as("actual %s", actual).isEqualTo(400);
      assertThat(json(answer).get("invalid-params").get(0).get("name").asString()).isEqualTo("actual");
    }
    assertThat(json(http.post("/v1/commit", Map.of("token", token, "actual", 0))).get("detail").asString())
        .contains("/v1/cancel");
    assertThat(http.post("/v1/commit", Map.of("token", token, "actual", 5)).statusCode())
        .as("the refused commits did not spend the token").isEqualTo(200);
    assertThat(room(key)).isEqualTo(95);
  }
}

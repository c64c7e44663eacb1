package dev.ratelimit.servlet;

import dev.ratelimit.http.HeaderOptions;
import dev.ratelimit.http.PolicyNames;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import dev.ratelimit.tck.http.StructuredFields;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RateLimitResponsesTest {
  private static final Policy API = Policy.of(100, Duration.ofMinutes(1)).withName("api");
  private static final Policy BURST = Policy.of(10, Duration.ofMillis(1500)).withName("burst");

  private static Decision allowed(Policy p, long remaining, Duration reset) {
    return new Decision(p, true, remaining, Duration.ZERO, reset, Duration.ZERO);
  }

  private static Decision denied(Policy p, Duration retry, Duration reset) {
    return new Decision(p, false, 0, retry, reset, Duration.ZERO);
  }

  @Test
  void secondsAreWholeAndRoundedUp() {
    assertThat(RateLimitResponses.ceilSeconds(Duration.ZERO)).isZero();
    assertThat(RateLimitResponses.ceilSeconds(Duration.ofNanos(1_000))).isEqualTo(1);
    assertThat(RateLimitResponses.ceilSeconds(Duration.ofMillis(1_001))).isEqualTo(2);
    assertThat(RateLimitResponses.ceilSeconds(Duration.ofSeconds(17))).isEqualTo(17);
    assertThat(RateLimitResponses.ceilSeconds(Duration.ofSeconds(-3))).isZero();
  }

  @Test
  void headersAreStructuredFieldListsOneItemPerDecision() {
    Stubs.Response response = new Stubs.Response();
    RateLimitResponses.writeHeaders(response.proxy, List.of(
        allowed(API, 99, Duration.ofMillis(600)), allowed(BURST, 9, Duration.ofMillis(150))), HeaderOptions.DEFAULT);
    assertThat(response.headers.get("RateLimit-Policy")).isEqualTo("\"api\";q=100;w=60, \"burst\";q=10;w=2");
    assertThat(response.headers.get("RateLimit")).isEqualTo("\"api\";r=99;t=1, \"burst\";r=9;t=1");
    List<StructuredFields.Member> items = StructuredFields.parseList(response.headers.get("RateLimit"));
    assertThat(items).extracting(StructuredFields.Member::value).containsExactly("api", "burst");
    assertThat(response.headers).doesNotContainKey("X-RateLimit-Limit");
  }

  @Test
  void headerFieldsAreTheFieldsTheResponseGetsWithRetryAfterWhenDenied() {
    List<Decision> allowed = List.of(allowed(API, 99, Duration.ofMillis(600)), allowed(BURST, 9, Duration.ofMillis(150)));
    Stubs.Response response = new Stubs.Response();
    RateLimitResponses.writeHeaders(response.proxy, allowed, new HeaderOptions(true, true));
    Map<String, String> fields = RateLimitResponses.headerFields(allowed, new HeaderOptions(true, true), false);
    assertThat(fields).isEqualTo(response.headers).containsOnlyKeys("RateLimit-Policy", "RateLimit",
        "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset");

    List<Decision> denied = List.of(denied(API, Duration.ofMillis(2_500), Duration.ofSeconds(40)),
        allowed(BURST, 9, Duration.ofMillis(150)));
    Stubs.Response refused = new Stubs.Response();
    RateLimitResponses.writeDeniedHeaders(refused.proxy, denied, HeaderOptions.DEFAULT);
    assertThat(RateLimitResponses.headerFields(denied, HeaderOptions.DEFAULT, true))
        .containsExactly(Map.entry("RateLimit-Policy", refused.headers.get("RateLimit-Policy")),
            Map.entry("RateLimit", "\"api\";r=0;t=3, \"burst\";r=9;t=1"), Map.entry("Retry-After", "3"));
    assertThat(RateLimitResponses.headerFields(List.of(), HeaderOptions.DEFAULT, true)).isEmpty();
  }

  @Test
  void policyNamesWithQuotesAndBackslashesParseBackAsTheSameStrings() {
    Policy odd = API.withName("a \"quoted\" \\ name\\");
    Policy plain = API.withName("x;q=1, \"y\"");
    Stubs.Response response = new Stubs.Response();
    RateLimitResponses.writeHeaders(response.proxy,
        List.of(allowed(odd, 1, Duration.ZERO), allowed(plain, 2, Duration.ofSeconds(3))), HeaderOptions.DEFAULT);
    List<StructuredFields.Member> policies = StructuredFields.parseList(response.headers.get("RateLimit-Policy"));
    assertThat(policies).extracting(StructuredFields.Member::string)
        .containsExactly("a \"quoted\" \\ name\\", "x;q=1, \"y\"");
    assertThat(policies).extracting(m -> m.integer("q")).containsExactly(100L, 100L);
    List<StructuredFields.Member> limits = StructuredFields.parseList(response.headers.get("RateLimit"));
    assertThat(limits).extracting(StructuredFields.Member::string)
        .containsExactly("a \"quoted\" \\ name\\", "x;q=1, \"y\"");
    assertThat(limits).extracting(m -> m.integer("r")).containsExactly(1L, 2L);
  }

  @Test
  void aNameNoStructuredFieldStringCanHoldIsLeftOutNeverPercentEncoded() {
    Stubs.Response response = new Stubs.Response();
    RateLimitResponses.writeHeaders(response.proxy, List.of(allowed(API.withName("café"), 1, Duration.ZERO),
        allowed(BURST, 4, Duration.ZERO), allowed(API.withName("line\nbreak"), 1, Duration.ZERO)),
        new HeaderOptions(true, true));
    assertThat(response.headers.get("RateLimit-Policy")).isEqualTo("\"burst\";q=10;w=2");
    assertThat(StructuredFields.parseList(response.headers.get("RateLimit")))
        .extracting(StructuredFields.Member::string).containsExactly("burst");
    assertThat(response.headers.values()).noneMatch(v -> v.contains("%") || v.contains("caf"));

    Stubs.Response none = new Stubs.Response();
    RateLimitResponses.writeHeaders(none.proxy, List.of(allowed(API.withName("日本"), 1, Duration.ZERO)),
        HeaderOptions.DEFAULT);
    assertThat(none.headers).doesNotContainKeys("RateLimit", "RateLimit-Policy");
  }

  @Test
  void aNameOutsidePrintableAsciiIsRefusedNamingItAndAnAsciiOne() {
    assertThat(PolicyNames.fitsHeader("per-key ~!\"\\")).isTrue();
    assertThat(PolicyNames.fitsHeader("café")).isFalse();
    assertThat(PolicyNames.fitsHeader("tab\there")).isFalse();
    assertThatThrownBy(() -> PolicyNames.requireFitsHeader("café-größe", "rule 'api'"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("policy name 'café-größe' (rule 'api')")
        .hasMessageContaining("printable ASCII")
        .hasMessageContaining("such as 'cafe-gro-e'");
    assertThat(PolicyNames.asciiSuggestion("日本")).isEqualTo("api");
    assertThat(PolicyNames.asciiSuggestion("Ärger im Büro")).isEqualTo("Arger im Buro");
  }

  @Test
  void legacyHeadersDescribeTheMostLimitingDecision() {
    Stubs.Response response = new Stubs.Response();
    RateLimitResponses.writeHeaders(response.proxy, List.of(
        allowed(API, 50, Duration.ofSeconds(30)), allowed(BURST, 2, Duration.ofMillis(1200))),
        new HeaderOptions(false, true));
    assertThat(response.headers).containsEntry("X-RateLimit-Limit", "10")
        .containsEntry("X-RateLimit-Remaining", "2").containsEntry("X-RateLimit-Reset", "2")
        .doesNotContainKey("RateLimit");

    Stubs.Response deniedResponse = new Stubs.Response();
    RateLimitResponses.writeHeaders(deniedResponse.proxy, List.of(
        denied(API, Duration.ofSeconds(40), Duration.ofSeconds(45)), allowed(BURST, 0, Duration.ofSeconds(1))),
        new HeaderOptions(false, true));
    assertThat(deniedResponse.headers).containsEntry("X-RateLimit-Limit", "100")
        .containsEntry("X-RateLimit-Reset", "45");
  }

  @Test
  void degradedDecisionsGetNoHeaders() {
    Stubs.Response response = new Stubs.Response();
    Decision degraded = new Decision(API, true, -1, Duration.ZERO, Duration.ZERO, Duration.ZERO);
    RateLimitResponses.writeHeaders(response.proxy, List.of(allowed(BURST, 3, Duration.ZERO), degraded),
        new HeaderOptions(true, true));
    assertThat(response.headers).isEmpty();
  }

  @Test
  void deniedResponseTakesTheLongestWaitOfTheDenyingPolicies() throws Exception {
    Stubs.Response response = new Stubs.Response();
    RateLimitResponses.writeDenied(response.proxy, List.of(
        denied(API, Duration.ofMillis(2_001), Duration.ofSeconds(5)),
        allowed(BURST, 4, Duration.ofSeconds(1)),
        denied(BURST.withName("other").withAlgorithm(Algorithm.FIXED_WINDOW), Duration.ofMillis(900), Duration.ofSeconds(1))),
        HeaderOptions.DEFAULT);
    assertThat(response.status).isEqualTo(429);
    assertThat(response.headers).containsEntry("Retry-After", "3").containsEntry("Cache-Control", "no-store")
        .containsEntry("Content-Type", "application/problem+json");
    // the draft: Retry-After should not come before the end of any effective window (t)
    assertThat(response.headers).containsEntry("RateLimit", "\"api\";r=0;t=3, \"burst\";r=4;t=1, \"other\";r=0;t=1");
    assertThat(Json.object(response.body.toString(java.nio.charset.StandardCharsets.UTF_8)).get("violated-policies"))
        .isEqualTo(List.of("api", "other"));
  }

  @Test
  void aDenialsEffectiveWindowIsItsOwnWaitNotTheTimeUntilFresh() {
    // GCRA, 5 a minute, exhausted: one unit back in 12 s, all five in 60 s
    Policy perUser = Policy.of(5, Duration.ofMinutes(1)).withName("per-user");
    Stubs.Response response = new Stubs.Response();
    RateLimitResponses.writeDeniedHeaders(response.proxy,
        List.of(denied(perUser, Duration.ofSeconds(12), Duration.ofSeconds(60))), HeaderOptions.DEFAULT);
    assertThat(response.headers).containsEntry("Retry-After", "12")
        .containsEntry("RateLimit", "\"per-user\";r=0;t=12");

    Stubs.Response allowed = new Stubs.Response();
    RateLimitResponses.writeHeaders(allowed.proxy, List.of(allowed(perUser, 0, Duration.ofSeconds(60))),
        HeaderOptions.DEFAULT);
    assertThat(allowed.headers).containsEntry("RateLimit", "\"per-user\";r=0;t=60");

    // two denying policies: each its own wait, though Retry-After is the longer one
    Policy hourly = Policy.of(100, Duration.ofHours(1)).withName("hourly");
    Stubs.Response both = new Stubs.Response();
    RateLimitResponses.writeDeniedHeaders(both.proxy, List.of(
        denied(perUser, Duration.ofSeconds(12), Duration.ofSeconds(60)),
        denied(hourly, Duration.ofSeconds(1800), Duration.ofSeconds(3600))), HeaderOptions.DEFAULT);
    assertThat(both.headers).containsEntry("Retry-After", "1800")
        .containsEntry("RateLimit", "\"per-user\";r=0;t=12, \"hourly\";r=0;t=1800");
  }

  @Test
  void theProblemBodyIsValidJsonWithEscapedNames() {
    Policy odd = API.withName("we\"ird\\name\u0001\u2028");
    String json = RateLimitResponses.problemJson(List.of(
        denied(odd, Duration.ofSeconds(3), Duration.ofSeconds(3)), allowed(BURST, 1, Duration.ZERO)), "/api/x?a=\"b\"");
    Map<String, Object> problem = Json.object(json);
    assertThat(problem).containsEntry("type", "https://iana.org/assignments/http-problem-types#quota-exceeded")
        .containsEntry("status", 429L)
        .containsEntry("instance", "/api/x?a=\"b\"")
        .containsEntry("violated-policies", List.of("we\"ird\\name\u0001\u2028"));
    assertThat((String) problem.get("detail")).contains("retry after 3 seconds");
    assertThat(json).doesNotContain("\u2028");
    assertThat(Json.object(RateLimitResponses.problemJson(List.of(denied(API, Duration.ZERO, Duration.ZERO)), null)))
        .doesNotContainKey("instance");
  }

  @Test
  void jsonStringsEscapeLoneSurrogatesAndKeepPairs() {
    assertThat(RateLimitResponses.jsonString("a\uD83D\uDE00b")).isEqualTo("\"a\uD83D\uDE00b\"");
    assertThat(RateLimitResponses.jsonString("a\uD83Db")).isEqualTo("\"a\\ud83db\"");
    assertThat(RateLimitResponses.jsonString("\uDE00")).isEqualTo("\"\\ude00\"");
  }

  @Test
  void aSecondWriterForOneRequestListsTheFirstWritersPoliciesToo() {
    Policy filter = Policy.of(2, Duration.ofHours(1)).withName("both-filter");
    Policy annotation = Policy.of(5, Duration.ofHours(1)).withName("both-ann");
    jakarta.servlet.http.HttpServletRequest request = Stubs.request("192.0.2.1");
    Stubs.Response response = new Stubs.Response();
    RateLimitResponses.writeHeaders(request, response.proxy,
        List.of(allowed(filter, 0, Duration.ofSeconds(3600))), new HeaderOptions(true, true));
    RateLimitResponses.writeHeaders(request, response.proxy,
        List.of(allowed(annotation, 3, Duration.ofSeconds(1440))), new HeaderOptions(true, true));
    assertThat(response.headers).containsEntry("RateLimit-Policy", "\"both-filter\";q=2;w=3600, \"both-ann\";q=5;w=3600")
        .containsEntry("RateLimit", "\"both-filter\";r=0;t=3600, \"both-ann\";r=3;t=1440")
        // the legacy fields: the most restrictive of both, the one with nothing left
        .containsEntry("X-RateLimit-Limit", "2").containsEntry("X-RateLimit-Remaining", "0");

    // without the request, a writer describes its own decisions only, as before
    Stubs.Response alone = new Stubs.Response();
    RateLimitResponses.writeHeaders(alone.proxy, List.of(allowed(annotation, 3, Duration.ofSeconds(1440))),
        HeaderOptions.DEFAULT);
    assertThat(alone.headers).containsEntry("RateLimit", "\"both-ann\";r=3;t=1440");
  }

  @Test
  void aDenialAfterAnotherWritersHeadersTakesTheLongestWaitOfEveryDenyingPolicy() throws Exception {
    Policy first = Policy.of(10, Duration.ofMinutes(1)).withName("first");
    Policy second = Policy.of(3, Duration.ofHours(1)).withName("second");
    jakarta.servlet.http.HttpServletRequest request = Stubs.request("192.0.2.1");
    Stubs.Response response = new Stubs.Response();
    RateLimitResponses.writeHeaders(request, response.proxy,
        List.of(denied(first, Duration.ofSeconds(40), Duration.ofSeconds(60))), HeaderOptions.DEFAULT);
    RateLimitResponses.writeDenied(request, response.proxy,
        List.of(denied(second, Duration.ofSeconds(25), Duration.ofSeconds(3600))), HeaderOptions.DEFAULT);
    assertThat(response.status).isEqualTo(429);
    assertThat(response.headers).containsEntry("Retry-After", "40")
        .containsEntry("RateLimit", "\"first\";r=0;t=40, \"second\";r=0;t=25");
    assertThat(Json.object(response.body.toString(java.nio.charset.StandardCharsets.UTF_8)).get("violated-policies"))
        .isEqualTo(List.of("first", "second"));
  }

  @Test
  void onePolicyCheckedTwiceForARequestIsListedOnceWithItsMoreRestrictiveDecision() {
    jakarta.servlet.http.HttpServletRequest request = Stubs.request("192.0.2.1");
    Stubs.Response response = new Stubs.Response();
    RateLimitResponses.writeHeaders(request, response.proxy,
        List.of(allowed(API, 7, Duration.ofSeconds(20)), allowed(BURST, 9, Duration.ofSeconds(1))), HeaderOptions.DEFAULT);
    RateLimitResponses.writeHeaders(request, response.proxy,
        List.of(allowed(API, 40, Duration.ofSeconds(5))), HeaderOptions.DEFAULT);
    assertThat(response.headers).containsEntry("RateLimit", "\"api\";r=7;t=20, \"burst\";r=9;t=1");
    RateLimitResponses.writeHeaders(request, response.proxy,
        List.of(allowed(API, 2, Duration.ofSeconds(5))), HeaderOptions.DEFAULT);
    assertThat(response.headers).containsEntry("RateLimit", "\"api\";r=2;t=5, \"burst\";r=9;t=1");
    assertThat(RateLimitResponses.recorded(request)).hasSize(2);
  }

  @Test
  void aDegradedDecisionAfterAnotherWritersHeadersLeavesNoLimitHeader() {
    jakarta.servlet.http.HttpServletRequest request = Stubs.request("192.0.2.1");
    Stubs.Response response = new Stubs.Response();
    RateLimitResponses.writeHeaders(request, response.proxy, List.of(allowed(API, 7, Duration.ofSeconds(20))),
        new HeaderOptions(true, true));
    assertThat(response.headers).containsKeys("RateLimit", "RateLimit-Policy", "X-RateLimit-Limit");
    Decision degraded = new Decision(BURST, true, -1, Duration.ZERO, Duration.ZERO, Duration.ZERO);
    RateLimitResponses.writeHeaders(request, response.proxy, List.of(degraded), new HeaderOptions(true, true));
    assertThat(response.headers).doesNotContainKeys("RateLimit", "RateLimit-Policy", "X-RateLimit-Limit",
        "X-RateLimit-Remaining", "X-RateLimit-Reset");
  }
}

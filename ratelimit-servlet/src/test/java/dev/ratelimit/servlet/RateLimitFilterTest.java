package dev.ratelimit.servlet;

import dev.ratelimit.http.HeaderOptions;
import dev.ratelimit.http.MissingKey;
import dev.ratelimit.http.RateLimitRule;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.FailureMode;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.tck.http.StructuredFields;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The filter over real HTTP: embedded Jetty, java.net.http, a manual clock. */
class RateLimitFilterTest {
  private final ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000));
  private final RateLimiter limiter = RateLimiter.builder().clock(clock).build();
  private TestServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
    limiter.close();
  }

  private static Policy api() {
    return Policy.of(3, Duration.ofMinutes(1)).withName("api");
  }

  private TestServer serve(RateLimitFilter.Builder builder) {
    server = TestServer.with(builder.build());
    return server;
  }

  private RateLimitFilter.Builder apiFilter() {
    return RateLimitFilter.builder(limiter).rule(RateLimitRule.builder("api").path("/api/**").policy(api()).build());
  }

  private static StructuredFields.Member single(HttpResponse<String> response, String header) {
    List<StructuredFields.Member> items = StructuredFields.parseList(response.headers().firstValue(header).orElse(null));
    assertThat(items).hasSize(1);
    return items.get(0);
  }

  @Test
  void allowedResponsesCarryTheDraftHeaders() {
    serve(apiFilter());
    HttpResponse<String> r = server.get("/api/things");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("ok GET /api/things");

    StructuredFields.Member policy = single(r, "RateLimit-Policy");
    assertThat(policy.value()).isEqualTo("api");
    assertThat(policy.integer("q")).isEqualTo(3);
    assertThat(policy.integer("w")).isEqualTo(60);
    StructuredFields.Member limit = single(r, "RateLimit");
    assertThat(limit.value()).isEqualTo("api");
    assertThat(limit.integer("r")).isEqualTo(2);
    assertThat(limit.integer("t")).isEqualTo(20); // GCRA: one emission interval (60 s / 3) to fresh
    assertThat(r.headers().firstValue("X-RateLimit-Limit")).isEmpty();
    assertThat(r.headers().firstValue("Retry-After")).isEmpty();
  }

  @Test
  void unmatchedPathsPassWithoutHeadersOrCounting() {
    serve(apiFilter());
    for (int i = 0; i < 5; i++) {
      HttpResponse<String> r = server.get("/public/page");
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.headers().firstValue("RateLimit")).isEmpty();
    }
    assertThat(limiter.inspect("api:127.0.0.1", api()).remaining()).isEqualTo(3);
  }

  @Test
  void deniedIs429WithRetryAfterRoundedUpNoStoreAndAProblemBody() {
    serve(apiFilter());
    for (int i = 0; i < 3; i++) {
      assertThat(server.get("/api/x").statusCode()).isEqualTo(200);
    }
    HttpResponse<String> denied = server.get("/api/x");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(denied.headers().firstValue("Retry-After")).hasValue("20");
    assertThat(denied.headers().firstValue("Cache-Control")).hasValue("no-store");
    assertThat(denied.headers().firstValue("Content-Type")).hasValueSatisfying(
        ct -> assertThat(ct).startsWith("application/problem+json"));
    assertThat(single(denied, "RateLimit").integer("r")).isZero();
    assertThat(single(denied, "RateLimit").integer("t")).as("the effective window ends with Retry-After").isEqualTo(20);
    assertThat(single(denied, "RateLimit-Policy").value()).isEqualTo("api");

    Map<String, Object> problem = Json.object(denied.body());
    assertThat(problem.get("type")).isEqualTo("https://iana.org/assignments/http-problem-types#quota-exceeded");
    assertThat(problem.get("status")).isEqualTo(429L);
    assertThat(problem.get("title")).isEqualTo("Request cannot be satisfied as assigned quota has been exceeded");
    assertThat(problem.get("violated-policies")).isEqualTo(List.of("api"));
    assertThat((String) problem.get("detail")).contains("'api'").contains("20 seconds");

    // 1.001 s before the real retryAfter: never earlier, so 2
    clock.advance(Duration.ofMillis(18_999));
    HttpResponse<String> stillDenied = server.get("/api/x");
    assertThat(stillDenied.statusCode()).isEqualTo(429);
    assertThat(stillDenied.headers().firstValue("Retry-After")).hasValue("2");
    clock.advance(Duration.ofMillis(1_000));
    assertThat(server.get("/api/x").headers().firstValue("Retry-After")).hasValue("1"); // 1 ms left
    clock.advance(Duration.ofMillis(1));
    assertThat(server.get("/api/x").statusCode()).isEqualTo(200);
  }

  @Test
  void firstMatchAppliesOnlyTheFirstMatchingRule() {
    Policy login = Policy.of(1, Duration.ofMinutes(1)).withName("login");
    Policy all = Policy.of(10, Duration.ofMinutes(1)).withName("all-api");
    serve(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("login").path("/api/login").policy(login).build())
        .rule(RateLimitRule.builder("api").path("/api/**").policy(all).build()));

    HttpResponse<String> r = server.get("/api/login");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(StructuredFields.parseList(r.headers().firstValue("RateLimit").orElseThrow()))
        .extracting(StructuredFields.Member::value).containsExactly("login");
    assertThat(server.get("/api/login").statusCode()).isEqualTo(429);
    assertThat(limiter.inspect("api:127.0.0.1", all).remaining()).isEqualTo(10);
    assertThat(server.get("/api/other").statusCode()).isEqualTo(200);
    assertThat(limiter.inspect("api:127.0.0.1", all).remaining()).isEqualTo(9);
  }

  @Test
  void matchAllAppliesEveryMatchingRuleAndStopsAtTheFirstDenial() {
    Policy login = Policy.of(1, Duration.ofMinutes(1)).withName("login");
    Policy all = Policy.of(10, Duration.ofMinutes(1)).withName("all-api");
    serve(RateLimitFilter.builder(limiter).matchAll(true)
        .rule(RateLimitRule.builder("login").path("/api/login").policy(login).build())
        .rule(RateLimitRule.builder("api").path("/api/**").policy(all).build()));

    HttpResponse<String> r = server.get("/api/login");
    assertThat(r.statusCode()).isEqualTo(200);
    List<StructuredFields.Member> items = StructuredFields.parseList(r.headers().firstValue("RateLimit").orElseThrow());
    assertThat(items).extracting(StructuredFields.Member::value).containsExactly("login", "all-api");
    assertThat(items.get(1).integer("r")).isEqualTo(9);
    assertThat(StructuredFields.parseList(r.headers().firstValue("RateLimit-Policy").orElseThrow()))
        .extracting(i -> i.integer("q")).containsExactly(1L, 10L);

    HttpResponse<String> denied = server.get("/api/login");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(Json.object(denied.body()).get("violated-policies")).isEqualTo(List.of("login"));
    // the later rule was not charged for the denied request
    assertThat(limiter.inspect("api:127.0.0.1", all).remaining()).isEqualTo(9);
  }

  @Test
  void methodsFilterAndGetCoversHead() {
    Policy writes = Policy.of(1, Duration.ofMinutes(1)).withName("writes");
    Policy reads = Policy.of(1, Duration.ofMinutes(1)).withName("reads");
    serve(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("writes").path("/api/**").method("POST", "delete").policy(writes).build())
        .rule(RateLimitRule.builder("reads").path("/api/**").method("GET").policy(reads).build()));

    assertThat(server.send("POST", "/api/x").statusCode()).isEqualTo(200);
    assertThat(server.send("DELETE", "/api/x").statusCode()).isEqualTo(429);
    assertThat(server.send("PUT", "/api/x").statusCode()).isEqualTo(200); // no rule for PUT
    assertThat(server.send("PUT", "/api/x").headers().firstValue("RateLimit")).isEmpty();
    assertThat(server.send("HEAD", "/api/x").statusCode()).isEqualTo(200); // counts as a read
    assertThat(server.get("/api/x").statusCode()).isEqualTo(429);
  }

  @Test
  void aCorsPreflightCountsOnlyAgainstARuleThatNamesOptions() {
    Policy any = Policy.of(1, Duration.ofMinutes(1)).withName("any");
    Policy preflights = Policy.of(1, Duration.ofMinutes(1)).withName("preflights");
    serve(RateLimitFilter.builder(limiter).matchAll(true)
        .rule(RateLimitRule.builder("any").path("/api/**").policy(any).build())
        .rule(RateLimitRule.builder("preflights").path("/cors/**").method("OPTIONS").policy(preflights).build()));
    String[] preflight = {"Origin", "https://app.example", "Access-Control-Request-Method", "POST"};
    for (int i = 0; i < 3; i++) { // the browser asks before each call: not a call
      assertThat(server.send("OPTIONS", "/api/x", preflight).statusCode()).isNotEqualTo(429);
    }
    assertThat(limiter.inspect("any:127.0.0.1", any).remaining()).as("preflights did not count").isEqualTo(1);
    assertThat(server.send("OPTIONS", "/api/x").statusCode()).as("a plain OPTIONS is a call").isNotEqualTo(429);
    assertThat(server.send("POST", "/api/x").statusCode()).isEqualTo(429);
    assertThat(server.send("OPTIONS", "/cors/x", preflight).statusCode()).isNotEqualTo(429);
    assertThat(server.send("OPTIONS", "/cors/x", preflight).statusCode()).as("named: counted").isEqualTo(429);
  }

  @Test
  void pathVariablesInKeys() {
    Policy perUser = Policy.of(1, Duration.ofMinutes(1)).withName("per-user");
    serve(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("users").path("/users/{id}", "/accounts/{id}/**").policy(perUser)
            .key("#pathVariables['id']").build()));

    assertThat(server.get("/users/42").statusCode()).isEqualTo(200);
    assertThat(server.get("/users/42").statusCode()).isEqualTo(429);
    assertThat(server.get("/accounts/42/settings").statusCode()).isEqualTo(429);
    assertThat(server.get("/users/43").statusCode()).isEqualTo(200);
    assertThat(limiter.inspect("users:42", perUser).remaining()).isZero();
    assertThat(limiter.inspect("users:44", perUser).remaining()).isEqualTo(1);
  }

  @Test
  void keysSeeHeadersParamsMethodAndPath() {
    Policy p = Policy.of(5, Duration.ofMinutes(1)).withName("p");
    serve(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("mixed").path("/api/**").policy(p)
            .key("#headers['x-tenant'] + '|' + #params['page'] + '|' + #method + '|' + #path + '|' + #principal")
            .build()));
    assertThat(server.get("/api/a%20b?page=2&page=3", "X-Tenant", "acme").statusCode()).isEqualTo(200);
    assertThat(limiter.inspect("mixed:acme|2|GET|/api/a b|null", p).remaining()).isEqualTo(4);
  }

  @Test
  void costExpressionChargesWhatItSays() {
    Policy p = Policy.of(10, Duration.ofMinutes(1)).withName("units");
    serve(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("batch").path("/batch").policy(p)
            .key("#params['k']").cost("#params['n'] ?: 1").build()));

    assertThat(remaining(server.get("/batch?k=a&n=4"))).isEqualTo(6);
    assertThat(remaining(server.get("/batch?k=a&n=6"))).isZero();
    assertThat(server.get("/batch?k=a&n=1").statusCode()).isEqualTo(429);
    assertThat(remaining(server.get("/batch?k=b"))).isEqualTo(9); // ?: 1
  }

  @Test
  void badCostsAreChargedSafelyAndLoggedOncePerMinute() {
    Policy p = Policy.of(10, Duration.ofMinutes(1)).withName("units");
    serve(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("batch").path("/batch").policy(p)
            .key("#params['k']").cost("#params['n']").build()));
    try (LogCapture log = new LogCapture()) {
      assertThat(remaining(server.get("/batch?k=big&n=1000"))).isZero(); // above capacity: charged 10
      assertThat(remaining(server.get("/batch?k=huge&n=99999999999999999999999"))).isZero();
      assertThat(remaining(server.get("/batch?k=zero&n=0"))).isEqualTo(9); // below 1: charged 1
      assertThat(remaining(server.get("/batch?k=neg&n=-5"))).isEqualTo(9);
      assertThat(remaining(server.get("/batch?k=word&n=abc"))).isEqualTo(9); // not a number: 1
      assertThat(remaining(server.get("/batch?k=exp&n=1e999999999"))).isEqualTo(9);
      assertThat(remaining(server.get("/batch?k=none"))).isEqualTo(9); // null: 1
      assertThat(remaining(server.get("/batch?k=frac&n=2.5"))).isEqualTo(7); // rounded up: 3
      assertThat(log.messages()).hasSize(1);
      assertThat(log.messages().get(0)).contains("rule 'batch'").contains("cost expression").contains("charged 10");
    }
  }

  private static long remaining(HttpResponse<String> r) {
    assertThat(r.statusCode()).isEqualTo(200);
    return single(r, "RateLimit").integer("r");
  }

  @Test
  void legacyHeadersOnRequest() {
    serve(apiFilter().headers(new HeaderOptions(false, true)));
    HttpResponse<String> r = server.get("/api/x");
    assertThat(r.headers().firstValue("RateLimit")).isEmpty();
    assertThat(r.headers().firstValue("RateLimit-Policy")).isEmpty();
    assertThat(r.headers().firstValue("X-RateLimit-Limit")).hasValue("3");
    assertThat(r.headers().firstValue("X-RateLimit-Remaining")).hasValue("2");
    assertThat(r.headers().firstValue("X-RateLimit-Reset")).hasValue("20");
    server.get("/api/x");
    server.get("/api/x");
    HttpResponse<String> denied = server.get("/api/x");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(denied.headers().firstValue("X-RateLimit-Remaining")).hasValue("0");
    assertThat(denied.headers().firstValue("X-RateLimit-Reset")).hasValue("60");
  }

  @Test
  void bothHeaderKindsTogether() {
    serve(apiFilter().headers(new HeaderOptions(true, true)));
    HttpResponse<String> r = server.get("/api/x");
    assertThat(r.headers().firstValue("RateLimit")).isPresent();
    assertThat(r.headers().firstValue("X-RateLimit-Limit")).hasValue("3");
  }

  @Test
  void degradedDecisionsPassWithoutAnyLimitHeader() {
    Stubs.FailingBackend backend = new Stubs.FailingBackend();
    try (RateLimiter failing = RateLimiter.builder().backend(backend).failureMode(FailureMode.FAIL_OPEN).build()) {
      server = TestServer.with(RateLimitFilter.builder(failing).headers(new HeaderOptions(true, true))
          .rule(RateLimitRule.builder("api").path("/api/**").policy(api()).build()).build());
      for (int i = 0; i < 5; i++) {
        HttpResponse<String> r = server.get("/api/x");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().map().keySet()).noneMatch(h -> h.toLowerCase().contains("ratelimit"));
      }
      assertThat(backend.calls.get()).isEqualTo(5);
    }
  }

  @Test
  void policyNamesWithQuotesAndBackslashesReachTheClientAsTheSameStrings() {
    String name = "say \"hi\" \\ o/";
    serve(RateLimitFilter.builder(limiter).rule(RateLimitRule.builder("odd").path("/**")
        .policy(Policy.of(3, Duration.ofMinutes(1)).withName(name)).build()));
    HttpResponse<String> r = server.get("/x");
    assertThat(r.headers().allValues("RateLimit-Policy")).containsExactly("\"say \\\"hi\\\" \\\\ o/\";q=3;w=60");
    assertThat(single(r, "RateLimit-Policy").string()).isEqualTo(name);
    StructuredFields.Member limit = single(r, "RateLimit");
    assertThat(limit.string()).isEqualTo(name);
    assertThat(limit.integer("r")).isEqualTo(2);
  }

  /** Two filters on one request, as a filter rule and a {@code @RateLimited} method check one in Spring. */
  private TestServer twoFilters(RateLimitFilter outer, RateLimitFilter inner) {
    server = TestServer.start(context -> {
      context.addFilter(new org.eclipse.jetty.ee10.servlet.FilterHolder(outer), "/*",
          java.util.EnumSet.of(jakarta.servlet.DispatcherType.REQUEST));
      context.addFilter(new org.eclipse.jetty.ee10.servlet.FilterHolder(inner), "/*",
          java.util.EnumSet.of(jakarta.servlet.DispatcherType.REQUEST));
    });
    return server;
  }

  @Test
  void twoChecksOfOneRequestListEveryPolicyAndDenyWithTheLongestWait() {
    Policy outer = Policy.of(5, Duration.ofHours(1)).withName("outer");
    Policy inner = Policy.of(2, Duration.ofHours(1)).withName("inner");
    twoFilters(RateLimitFilter.builder(limiter).rule(RateLimitRule.builder("o").path("/**").policy(outer).build())
            .headers(new HeaderOptions(true, true)).build(),
        RateLimitFilter.builder(limiter).rule(RateLimitRule.builder("i").path("/**").policy(inner).build())
            .headers(new HeaderOptions(true, true)).build());
    HttpResponse<String> first = server.get("/x");
    assertThat(first.headers().allValues("RateLimit")).containsExactly("\"outer\";r=4;t=720, \"inner\";r=1;t=1800");
    assertThat(first.headers().allValues("RateLimit-Policy"))
        .containsExactly("\"outer\";q=5;w=3600, \"inner\";q=2;w=3600");
    assertThat(first.headers().firstValue("X-RateLimit-Remaining")).hasValue("1");
    assertThat(server.get("/x").statusCode()).isEqualTo(200);
    HttpResponse<String> denied = server.get("/x");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(denied.headers().allValues("Retry-After")).containsExactly("1800");
    assertThat(denied.headers().allValues("RateLimit")).containsExactly("\"outer\";r=2;t=1800, \"inner\";r=0;t=1800");
    assertThat(Json.object(denied.body()).get("violated-policies")).isEqualTo(List.of("inner"));
  }

  @Test
  void aDegradedSecondCheckRemovesTheFirstChecksHeaders() {
    try (RateLimiter failing = RateLimiter.builder().backend(new Stubs.FailingBackend())
        .failureMode(FailureMode.FAIL_OPEN).build()) {
      twoFilters(apiFilter().headers(new HeaderOptions(true, true)).build(),
          RateLimitFilter.builder(failing).rule(RateLimitRule.builder("down").path("/**")
              .policy(Policy.of(9, Duration.ofMinutes(1)).withName("down")).build()).build());
      HttpResponse<String> r = server.get("/api/x");
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.headers().map().keySet()).noneMatch(h -> h.toLowerCase().contains("ratelimit"));
    }
  }

  @Test
  void failClosedDeniesWithRetryAfterButNoLimitHeaders() {
    try (RateLimiter failing = RateLimiter.builder().backend(new Stubs.FailingBackend())
        .failureMode(FailureMode.FAIL_CLOSED).build()) {
      server = TestServer.with(RateLimitFilter.builder(failing)
          .rule(RateLimitRule.builder("api").path("/api/**").policy(api()).build()).build());
      HttpResponse<String> r = server.get("/api/x");
      assertThat(r.statusCode()).isEqualTo(429);
      assertThat(r.headers().firstValue("Retry-After")).hasValue("1");
      assertThat(r.headers().firstValue("RateLimit")).isEmpty();
      assertThat(r.headers().firstValue("RateLimit-Policy")).isEmpty();
    }
  }

  @Test
  void deniedHandlerWritesTheDeniedResponse() {
    List<String> seen = new ArrayList<>();
    serve(apiFilter().deniedHandler((request, response, decision) -> {
      seen.add(request.getRequestURI() + " " + decision.allowed() + " " + decision.limiting().policy().name()
          + " limit header set: " + response.containsHeader("RateLimit"));
      response.setStatus(503);
      response.setHeader("X-Denied-By", decision.limiting().policy().name());
      response.getWriter().write("slow down");
    }));
    for (int i = 0; i < 3; i++) {
      server.get("/api/x");
    }
    HttpResponse<String> r = server.get("/api/x");
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.body()).isEqualTo("slow down");
    assertThat(r.headers().firstValue("X-Denied-By")).hasValue("api");
    assertThat(single(r, "RateLimit").integer("t")).as("a denial's effective window is its wait (GCRA, 3 a minute)")
        .isEqualTo(20);
    assertThat(seen).containsExactly("/api/x false api limit header set: true");
  }

  @Test
  void missingKeySharesOneBucketByDefault() {
    Policy p = Policy.of(2, Duration.ofMinutes(1)).withName("p");
    serve(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("keyed").path("/api/**").policy(p).key("#headers['X-Api-Key']").build()));
    try (LogCapture log = new LogCapture()) {
      assertThat(server.get("/api/x").statusCode()).isEqualTo(200);
      assertThat(server.get("/api/y", "X-Api-Key", " ").statusCode()).isEqualTo(200); // blank
      assertThat(server.get("/api/z").statusCode()).isEqualTo(429); // the same shared bucket
      assertThat(server.get("/api/x", "X-Api-Key", "k1").statusCode()).isEqualTo(200);
      assertThat(limiter.inspect("keyed:<missing>", p).remaining()).isZero();
      assertThat(limiter.inspect("keyed:k1", p).remaining()).isEqualTo(1);
      assertThat(log.messages()).hasSize(1);
      assertThat(log.messages().get(0)).contains("rule 'keyed'").contains("keyed:<missing>");
    }
  }

  @Test
  void missingKeyRejectAnswers400AndCountsNothing() {
    Policy p = Policy.of(2, Duration.ofMinutes(1)).withName("p");
    Policy all = Policy.of(10, Duration.ofMinutes(1)).withName("all");
    serve(RateLimitFilter.builder(limiter).matchAll(true).missingKey(MissingKey.REJECT)
        .rule(RateLimitRule.builder("everything").path("/**").policy(all).build())
        .rule(RateLimitRule.builder("keyed").path("/api/**").policy(p).key("#headers['X-Api-Key']").build()));
    HttpResponse<String> r = server.get("/api/x");
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(ct -> assertThat(ct).startsWith("application/problem+json"));
    Map<String, Object> problem = Json.object(r.body());
    assertThat(problem.get("status")).isEqualTo(400L);
    assertThat((String) problem.get("detail")).contains("'keyed'");
    assertThat(limiter.inspect("everything:127.0.0.1", all).remaining()).isEqualTo(10);
    assertThat(server.get("/api/x", "X-Api-Key", "k").statusCode()).isEqualTo(200);
    assertThat(limiter.inspect("everything:127.0.0.1", all).remaining()).isEqualTo(9);
  }

  @Test
  void aKeyExpressionThatFailsIsAMissingKey() {
    Policy p = Policy.of(1, Duration.ofMinutes(1)).withName("p");
    // no user on these requests: reading the principal's name fails
    serve(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("r").path("/**").policy(p).key("#request.userPrincipal.name").build()));
    assertThat(server.get("/a").statusCode()).isEqualTo(200);
    assertThat(server.get("/b").statusCode()).isEqualTo(429);
    assertThat(limiter.inspect("r:<missing>", p).remaining()).isZero();
  }

  @Test
  void aValueThatIsNoKeyIsAMissingKeyNotABucketPerRequest() {
    Policy p = Policy.of(1, Duration.ofMinutes(1)).withName("p");
    // the cookies array prints as a new identity on every request: each would get a fresh bucket
    serve(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("r").path("/**").policy(p).key("#request.cookies").build()));
    try (LogCapture log = new LogCapture()) {
      assertThat(server.get("/a", "Cookie", "session=1").statusCode()).isEqualTo(200);
      assertThat(server.get("/b", "Cookie", "session=1").statusCode()).isEqualTo(429);
      assertThat(limiter.inspect("r:<missing>", p).remaining()).isZero();
      assertThat(log.messages()).singleElement().asString().contains("jakarta.servlet.http.Cookie[], which is not a key")
          .contains("read one of its values").contains("the request was limited under the shared key 'r:<missing>'");
    }
  }

  @Test
  void aNumberOrABooleanIsAKeyAsJavaPrintsIt() {
    Policy p = Policy.of(1, Duration.ofMinutes(1)).withName("p");
    serve(RateLimitFilter.builder(limiter).matchAll(true)
        .rule(RateLimitRule.builder("secure").path("/**").policy(p).key("#request.secure").build())
        .rule(RateLimitRule.builder("port").path("/**").policy(p.withName("q")).key("#request.secure ? 443 : 80")
            .build()));
    assertThat(server.get("/a").statusCode()).isEqualTo(200);
    assertThat(limiter.inspect("secure:false", p).remaining()).isZero();
    assertThat(limiter.inspect("port:80", p.withName("q")).remaining()).isZero();
  }

  @Test
  void aMapKeyIsAKeyByItsContents() {
    Policy p = Policy.of(1, Duration.ofMinutes(1)).withName("p");
    serve(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("r").path("/users/{id}").policy(p).key("#pathVariables").build()));
    assertThat(server.get("/users/1").statusCode()).isEqualTo(200);
    assertThat(server.get("/users/2").statusCode()).isEqualTo(200);
    assertThat(server.get("/users/1").statusCode()).isEqualTo(429);
    assertThat(limiter.inspect("r:{id=1}", p).remaining()).isZero();
  }

  @Test
  void aRequestForwardedToALimitedPathIsCheckedThereOnceWhenTheFilterSeesForwards() {
    Policy p = Policy.of(2, Duration.ofMinutes(1)).withName("p");
    RateLimitFilter filter = RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("login").path("/login").policy(p).build()).build();
    server = TestServer.start(context -> {
      context.addFilter(new org.eclipse.jetty.ee10.servlet.FilterHolder(filter), "/*",
          java.util.EnumSet.of(jakarta.servlet.DispatcherType.REQUEST, jakarta.servlet.DispatcherType.FORWARD));
      context.addServlet(new org.eclipse.jetty.ee10.servlet.ServletHolder(new jakarta.servlet.http.HttpServlet() {
        @Override
        protected void service(jakarta.servlet.http.HttpServletRequest request,
            jakarta.servlet.http.HttpServletResponse response) throws jakarta.servlet.ServletException, java.io.IOException {
          request.getRequestDispatcher("/login").forward(request, response);
        }
      }), "/old-login");
    });
    assertThat(server.get("/old-login").statusCode()).isEqualTo(200); // matched nothing, forwarded: /login counts
    assertThat(server.get("/login").statusCode()).isEqualTo(200);
    assertThat(server.get("/old-login").statusCode()).as("the old path does not escape the rule").isEqualTo(429);
    assertThat(limiter.inspect("login:127.0.0.1", p).remaining()).isZero();
  }

  @Test
  void rulesNeverShareCountersEvenWithTheSameKeyAndPolicyName() {
    Policy p = Policy.of(1, Duration.ofMinutes(1)).withName("p");
    serve(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("a").path("/a").policy(p).build())
        .rule(RateLimitRule.builder("b").path("/b").policy(p).build()));
    assertThat(server.get("/a").statusCode()).isEqualTo(200);
    assertThat(server.get("/b").statusCode()).isEqualTo(200);
    assertThat(server.get("/a").statusCode()).isEqualTo(429);
  }

  @Test
  void theCanonicalPathIsMatchedNotTheRawUri() {
    Policy p = Policy.of(1, Duration.ofMinutes(1)).withName("p");
    serve(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("login").path("/api/login").policy(p).build()));
    assertThat(server.get("/api/login").statusCode()).isEqualTo(200);
    assertThat(server.get("/api/login/").statusCode()).isEqualTo(429); // trailing slash
    assertThat(server.get("/%61pi/login").statusCode()).isEqualTo(429); // encoded letter
    assertThat(server.get("/api/login;jsessionid=x").statusCode()).isEqualTo(429); // path parameter
    assertThat(server.get("/api/x/../login").statusCode()).isEqualTo(429); // dot segment
  }

  @Test
  void aPercentInThePathIsNotDecodedTwice() {
    Policy p = Policy.of(1, Duration.ofMinutes(1)).withName("p");
    server = TestServer.lenient(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("pct").path("/files/{name}").policy(p).key("#pathVariables['name']").build())
        .build());
    assertThat(server.get("/files/a%2541").statusCode()).isEqualTo(200); // the name is "a%41", not "aA"
    assertThat(limiter.inspect("pct:a%41", p).remaining()).isZero();
    assertThat(server.get("/files/x%3By").statusCode()).isEqualTo(200); // "x;y", not "x" with a parameter
    assertThat(limiter.inspect("pct:x;y", p).remaining()).isZero();
  }

  @Test
  void untrustedPeersCannotSpoofTheirAddress() {
    Policy p = Policy.of(1, Duration.ofMinutes(1)).withName("p");
    serve(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("ip").path("/**").policy(p).build())
        .trustedProxies(List.of("10.0.0.0/8"))); // the peer, 127.0.0.1, is not trusted
    assertThat(server.get("/", "X-Forwarded-For", "198.51.100.1").statusCode()).isEqualTo(200);
    assertThat(server.get("/", "Forwarded", "for=198.51.100.2").statusCode()).isEqualTo(429);
    assertThat(server.get("/").statusCode()).isEqualTo(429);
    assertThat(limiter.inspect("ip:127.0.0.1", p).remaining()).isZero();
    assertThat(limiter.inspect("ip:198.51.100.1", p).remaining()).isEqualTo(1);
  }

  /** Spring's ForwardedHeaderFilter ahead of the filter: it believes every peer, and hides the headers. */
  private TestServer serveBehindForwardedHeaderFilter(RateLimitFilter filter) {
    return TestServer.start(context -> {
      var dispatch = java.util.EnumSet.of(jakarta.servlet.DispatcherType.REQUEST);
      context.addFilter(new org.eclipse.jetty.ee10.servlet.FilterHolder(
          new org.springframework.web.filter.ForwardedHeaderFilter()), "/*", dispatch);
      context.addFilter(new org.eclipse.jetty.ee10.servlet.FilterHolder(filter), "/*", dispatch);
    });
  }

  @Test
  void aForwardedHeaderFilterAheadDoesNotLetAnUntrustedPeerChooseItsAddress() {
    Policy p = Policy.of(1, Duration.ofMinutes(1)).withName("p");
    server = serveBehindForwardedHeaderFilter(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("ip").path("/**").policy(p).build()).build());
    try (LogCapture log = new LogCapture()) {
      assertThat(server.get("/", "X-Forwarded-For", "198.51.100.1").statusCode()).isEqualTo(200);
      assertThat(server.get("/", "Forwarded", "for=198.51.100.2").statusCode()).isEqualTo(429);
      assertThat(log.messages()).as("the peer sent forwarding headers, though hidden by the wrapper")
          .singleElement().satisfies(m -> assertThat(m).contains("requests from 127.0.0.1 carry X-Forwarded-For"));
    }
    assertThat(limiter.inspect("ip:127.0.0.1", p).remaining()).isZero();
    assertThat(limiter.inspect("ip:198.51.100.1", p).remaining()).isEqualTo(1);
  }

  @Test
  void aForwardedHeaderFilterAheadLeavesATrustedProxysHeadersReadable() {
    Policy p = Policy.of(1, Duration.ofMinutes(1)).withName("p");
    server = serveBehindForwardedHeaderFilter(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("ip").path("/**").policy(p).build())
        .trustedProxies(List.of("127.0.0.1")).build());
    assertThat(server.get("/", "X-Forwarded-For", "198.51.100.1, 10.0.0.1").statusCode()).isEqualTo(200);
    // the wrapper reads the leftmost entry; the trusted proxies read from the right
    assertThat(limiter.inspect("ip:10.0.0.1", p).remaining()).isZero();
    assertThat(server.get("/", "Forwarded", "for=198.51.100.2").statusCode()).isEqualTo(200);
    assertThat(limiter.inspect("ip:198.51.100.2", p).remaining()).isZero();
  }

  @Test
  void aLocalProxyThatIsNotTrustedIsPointedOutOncePerMinute() {
    Policy p = Policy.of(10, Duration.ofMinutes(1)).withName("p");
    serve(RateLimitFilter.builder(limiter).rule(RateLimitRule.builder("ip").path("/**").policy(p).build()));
    try (LogCapture log = new LogCapture()) {
      assertThat(server.get("/").statusCode()).isEqualTo(200);
      assertThat(log.messages()).as("no forwarding header: nothing to point out").isEmpty();
      for (int i = 0; i < 3; i++) { // the peer, 127.0.0.1, is local and not trusted
        assertThat(server.get("/", "X-Forwarded-For", "198.51.100." + i).statusCode()).isEqualTo(200);
      }
      assertThat(log.messages()).hasSize(1);
      assertThat(log.messages().get(0)).contains("requests from 127.0.0.1 carry X-Forwarded-For")
          .contains("not a trusted proxy").contains("ratelimit.trusted-proxies");
    }
    assertThat(limiter.inspect("ip:127.0.0.1", p).remaining()).as("the peer's key, all four").isEqualTo(6);
  }

  /** The client's address is worked out only for a rule that reads it: a rule keyed otherwise never warns. */
  @Test
  void aRuleThatDoesNotReadTheClientsAddressNeverLooksAtForwarding() {
    Policy p = Policy.of(10, Duration.ofMinutes(1)).withName("p");
    serve(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("user").path("/**").key("#params['user']").policy(p).build()));
    try (LogCapture log = new LogCapture()) {
      for (int i = 0; i < 3; i++) {
        assertThat(server.get("/?user=u", "X-Forwarded-For", "198.51.100." + i).statusCode()).isEqualTo(200);
      }
      assertThat(log.messages()).isEmpty();
    }
    assertThat(limiter.inspect("user:u", p).remaining()).isEqualTo(7);
  }

  @Test
  void clientNetworkKeysAnIpv6Slash64AsOneClient() {
    Policy p = Policy.of(1, Duration.ofMinutes(1)).withName("p");
    serve(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("net").path("/**").policy(p).key("#clientNetwork").build())
        .trustedProxies(List.of("127.0.0.1/32")));
    assertThat(server.get("/", "X-Forwarded-For", "2001:db8:1:2::7").statusCode()).isEqualTo(200);
    assertThat(server.get("/", "X-Forwarded-For", "2001:db8:1:2:ffff::8").statusCode()).as("the same /64").isEqualTo(429);
    assertThat(server.get("/", "X-Forwarded-For", "2001:db8:1:3::7").statusCode()).isEqualTo(200);
    assertThat(server.get("/", "X-Forwarded-For", "203.0.113.7").statusCode()).isEqualTo(200);
    assertThat(server.get("/", "X-Forwarded-For", "203.0.113.8").statusCode()).as("IPv4: per address").isEqualTo(200);
    assertThat(limiter.inspect("net:2001:db8:1:2::/64", p).remaining()).isZero();
    assertThat(limiter.inspect("net:203.0.113.7", p).remaining()).isZero();
  }

  @Test
  void aTrustedProxyChainNamesTheClient() {
    Policy p = Policy.of(1, Duration.ofMinutes(1)).withName("p");
    serve(RateLimitFilter.builder(limiter)
        .rule(RateLimitRule.builder("ip").path("/**").policy(p).build())
        .trustedProxies(List.of("127.0.0.1/32", "10.0.0.0/8", "2001:db8:ffff::/48")));
    assertThat(server.get("/", "X-Forwarded-For", "203.0.113.7, 10.0.0.2").statusCode()).isEqualTo(200);
    assertThat(limiter.inspect("ip:203.0.113.7", p).remaining()).isZero();
    // the same client through another chain: the same bucket; a forged leftmost entry changes nothing
    assertThat(server.get("/", "X-Forwarded-For", "192.0.2.66, 203.0.113.7").statusCode()).isEqualTo(429);
    assertThat(server.get("/", "Forwarded", "for=\"[2001:db8::1]:4711\", for=\"[2001:db8:ffff::5]\"").statusCode())
        .isEqualTo(200);
    assertThat(limiter.inspect("ip:2001:db8::1", p).remaining()).isZero();
    assertThat(server.get("/", "X-Forwarded-For", "2001:DB8:0:0::1").statusCode()).isEqualTo(429); // same address
    assertThat(limiter.inspect("ip:127.0.0.1", p).remaining()).isEqualTo(1);
  }

  /** Records what the filter logs through System.Logger (java.util.logging by default). */
  static final class LogCapture extends Handler implements AutoCloseable {
    private final Logger logger = Logger.getLogger(RateLimitFilter.class.getName());
    private final List<String> messages = new ArrayList<>();

    LogCapture() {
      logger.addHandler(this);
    }

    synchronized List<String> messages() {
      return List.copyOf(messages);
    }

    @Override
    public synchronized void publish(LogRecord record) {
      messages.add(record.getMessage());
    }

    @Override
    public void flush() {}

    @Override
    public void close() {
      logger.removeHandler(this);
    }
  }
}

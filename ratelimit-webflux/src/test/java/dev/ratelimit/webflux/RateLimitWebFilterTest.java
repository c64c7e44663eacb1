package dev.ratelimit.webflux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Decision;
import dev.ratelimit.FailureMode;
import dev.ratelimit.ManualClock;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.http.DeniedResponse;
import dev.ratelimit.http.HeaderOptions;
import dev.ratelimit.http.MissingKey;
import dev.ratelimit.http.RateLimitRule;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.spi.Command;
import dev.ratelimit.tck.docs.DocPage;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The reactive filter over real HTTP on Reactor Netty: rules, keys, headers, denied responses, failure modes. */
class RateLimitWebFilterTest {
  private final ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
  private final RateLimiter limiter = RateLimiter.builder().clock(clock).build();
  private final Policy twoPerMinute = Policy.parse("2/1m").withName("per-ip");

  private static RateLimitRule.Builder rule(String name, String path, Policy policy) {
    return RateLimitRule.builder(name).path(path).policy(policy);
  }

  @Test
  void limitsARuleWithTheLimitHeadersAndAProblemBody() throws Exception {
    RateLimitWebFilter filter = RateLimitWebFilter.builder(limiter).rule(rule("api", "/api/**", twoPerMinute).build())
        .build();
    try (NettyApp app = new NettyApp(filter)) {
      HttpResponse<String> first = app.get("/api/items");
      assertThat(first.statusCode()).isEqualTo(200);
      assertThat(first.body()).isEqualTo("ok /api/items");
      assertThat(first.headers().firstValue("RateLimit-Policy")).hasValue("\"per-ip\";q=2;w=60");
      assertThat(first.headers().firstValue("RateLimit")).hasValue("\"per-ip\";r=1;t=30");
      assertThat(app.get("/api/items").headers().firstValue("RateLimit")).hasValue("\"per-ip\";r=0;t=60");

      HttpResponse<String> denied = app.get("/api/items");
      assertThat(denied.statusCode()).isEqualTo(429);
      assertThat(denied.headers().firstValue("Retry-After")).hasValue("30");
      assertThat(denied.headers().firstValue("Cache-Control")).hasValue("no-store");
      assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/problem+json");
      assertThat(denied.headers().firstValue("RateLimit")).hasValue("\"per-ip\";r=0;t=30");
      assertThat(denied.body()).isEqualTo("{\"type\":\"https://iana.org/assignments/http-problem-types#quota-exceeded\","
          + "\"title\":\"Request cannot be satisfied as assigned quota has been exceeded\",\"status\":429,"
          + "\"detail\":\"Quota exceeded for policy 'per-ip'; retry after 30 seconds.\",\"violated-policies\":[\"per-ip\"]}");
      assertThat(app.handlerThread.get()).as("the handler ran for the allowed ones").isNotNull();

      HttpResponse<String> other = app.get("/other");
      assertThat(other.statusCode()).as("no rule matches").isEqualTo(200);
      assertThat(other.headers().firstValue("RateLimit")).isEmpty();

      clock.advance(Duration.ofSeconds(30));
      assertThat(app.get("/api/items/").statusCode()).as("a trailing slash is the same path").isEqualTo(200);
    }
  }

  @Test
  void thePagesExampleLimitsPerIp() throws Exception {
    DocPage page = DocPage.read("docs/reactive.md");
    page.assertRunBy(page.block("java", "RateLimitWebFilter.builder(limiter)"),
        "src/test/java/dev/ratelimit/webflux/RateLimitWebFilterTest.java");
    // --- as in the page
    RateLimitWebFilter filter = RateLimitWebFilter.builder(limiter)
        .rule(RateLimitRule.builder("api")
            .path("/api/**")
            .policy(Policy.parse("100/1m").withName("per-ip"))
            .build())
        .trustedProxies(List.of("10.0.0.0/8"))
        .build();
    // ---
    try (NettyApp app = new NettyApp(filter)) {
      HttpResponse<String> response = app.get("/api/x");
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.headers().firstValue("RateLimit-Policy")).hasValue("\"per-ip\";q=100;w=60");
    }
  }

  @Test
  void keysReadPathVariablesHeadersAndThePrincipal() throws Exception {
    Policy one = Policy.parse("1/1m").withName("one");
    RateLimitWebFilter filter = RateLimitWebFilter.builder(limiter)
        .rule(rule("users", "/users/{id}", one).key("#pathVariables['id'] + ':' + #headers['x-tenant']").build())
        .rule(rule("me", "/me", one).key("#principal").build())
        .build();
    try (NettyApp app = new NettyApp(filter)) {
      assertThat(app.get("/users/1", "X-Tenant", "a").statusCode()).isEqualTo(200);
      assertThat(app.get("/users/1", "X-Tenant", "a").statusCode()).isEqualTo(429);
      assertThat(app.get("/users/1", "X-Tenant", "b").statusCode()).isEqualTo(200);
      assertThat(app.get("/users/2", "X-Tenant", "a").statusCode()).isEqualTo(200);

      assertThat(app.get("/me", "X-User", "alice").statusCode()).isEqualTo(200);
      assertThat(app.get("/me", "X-User", "alice").statusCode()).isEqualTo(429);
      assertThat(app.get("/me", "X-User", "bob").statusCode()).isEqualTo(200);
    }
    assertThat(limiter.inspect("users:1:a", one).remaining()).isZero();
    assertThat(limiter.inspect("me:alice", one).remaining()).isZero();
  }

  @Test
  void clientIpBelievesForwardingHeadersOnlyFromTrustedProxies() throws Exception {
    Policy one = Policy.parse("1/1m").withName("one");
    RateLimitRule byIp = rule("ip", "/**", one).build();
    try (NettyApp trusting = new NettyApp(RateLimitWebFilter.builder(limiter).rule(byIp)
        .trustedProxies(List.of("127.0.0.0/8")).build())) {
      assertThat(trusting.get("/a", "X-Forwarded-For", "203.0.113.5").statusCode()).isEqualTo(200);
      assertThat(trusting.get("/a", "X-Forwarded-For", "203.0.113.6").statusCode()).isEqualTo(200);
      assertThat(trusting.get("/a", "X-Forwarded-For", "203.0.113.5").statusCode()).isEqualTo(429);
      assertThat(trusting.get("/a", "Forwarded", "for=\"[2001:db8::7]:4711\"").statusCode()).isEqualTo(200);
    }
    assertThat(limiter.inspect("ip:203.0.113.6", one).remaining()).isZero();
    assertThat(limiter.inspect("ip:2001:db8::7", one).remaining()).isZero();

    RateLimiter fresh = RateLimiter.builder().clock(clock).build();
    try (NettyApp untrusting = new NettyApp(RateLimitWebFilter.builder(fresh).rule(byIp).build())) {
      assertThat(untrusting.get("/a", "X-Forwarded-For", "203.0.113.5").statusCode()).isEqualTo(200);
      assertThat(untrusting.get("/a", "X-Forwarded-For", "203.0.113.6").statusCode())
          .as("a spoofed header from an untrusted peer changes nothing").isEqualTo(429);
    }
    assertThat(fresh.inspect("ip:127.0.0.1", one).remaining()).isZero();
  }

  @Test
  void aMissingKeySharesABucketOrIsRejected() throws Exception {
    Policy one = Policy.parse("1/1m").withName("one");
    RateLimitRule byKey = rule("k", "/**", one).key("#headers['X-Api-Key']").build();
    try (NettyApp app = new NettyApp(RateLimitWebFilter.builder(limiter).rule(byKey).build())) {
      assertThat(app.get("/a").statusCode()).isEqualTo(200);
      assertThat(app.get("/b").statusCode()).as("one shared bucket for every request without a key").isEqualTo(429);
    }
    try (NettyApp app = new NettyApp(RateLimitWebFilter.builder(RateLimiter.builder().clock(clock).build())
        .rule(byKey).missingKey(MissingKey.REJECT).build())) {
      HttpResponse<String> rejected = app.get("/a");
      assertThat(rejected.statusCode()).isEqualTo(400);
      assertThat(rejected.headers().firstValue("Content-Type")).hasValue("application/problem+json");
      assertThat(rejected.body()).contains("The request lacks what rate limit 'k' is keyed on.");
      assertThat(app.get("/a", "X-Api-Key", "abc").statusCode()).isEqualTo(200);
    }
  }

  @Test
  void countWhenChargesOnlyTheResponsesItNames() throws Exception {
    RateLimitWebFilter filter = RateLimitWebFilter.builder(limiter)
        .rule(rule("login", "/login", twoPerMinute).countWhen("#response.status == 401").build()).build();
    try (NettyApp app = new NettyApp(filter)) {
      for (int i = 0; i < 3; i++) {
        assertThat(app.get("/login").statusCode()).as("successes are not counted").isEqualTo(200);
      }
      assertThat(app.get("/login?status=401").statusCode()).isEqualTo(401);
      assertThat(app.get("/login?status=401").statusCode()).isEqualTo(401);
      assertThat(app.get("/login").statusCode()).as("two failures used the limit").isEqualTo(429);
    }
  }

  /**
   * Eight requests in flight at once with room for one failure: the first reserves the unit and is
   * held until the others were answered; they find no room, so exactly one runs and counts.
   */
  @Test
  void countWhenRequestsInFlightAtOnceNeverPassBeyondTheLimit() throws Exception {
    int n = 8;
    Policy one = Policy.parse("1/15m").withName("one");
    java.util.concurrent.CompletableFuture<Void> release = new java.util.concurrent.CompletableFuture<>();
    java.util.concurrent.atomic.AtomicInteger entered = new java.util.concurrent.atomic.AtomicInteger();
    org.springframework.web.server.WebHandler held = exchange -> {
      entered.incrementAndGet();
      return reactor.core.publisher.Mono.fromFuture(release).then(reactor.core.publisher.Mono.fromRunnable(
          () -> exchange.getResponse().setStatusCode(org.springframework.http.HttpStatus.UNAUTHORIZED)));
    };
    RateLimitWebFilter filter = RateLimitWebFilter.builder(limiter)
        .rule(rule("login", "/login", one).countWhen("#response.status == 401").build()).build();
    java.util.concurrent.ExecutorService clients = java.util.concurrent.Executors.newFixedThreadPool(n);
    try (NettyApp app = new NettyApp(filter, held)) {
      List<java.util.concurrent.Future<Integer>> answers = new java.util.ArrayList<>();
      for (int i = 0; i < n; i++) {
        answers.add(clients.submit(() -> app.get("/login").statusCode()));
      }
      long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
      while (answers.stream().filter(java.util.concurrent.Future::isDone).count() < n - 1
          && System.nanoTime() < deadline) {
        Thread.sleep(5); // all but the one holding the unit are answered at once
      }
      assertThat(entered.get()).as("only the request holding the unit runs").isEqualTo(1);
      release.complete(null);
      List<Integer> statuses = new java.util.ArrayList<>();
      for (java.util.concurrent.Future<Integer> answer : answers) {
        statuses.add(answer.get(30, java.util.concurrent.TimeUnit.SECONDS));
      }
      assertThat(statuses).filteredOn(status -> status == 401).as("admitted: the limit, none beyond").hasSize(1);
      assertThat(statuses).filteredOn(status -> status == 429).hasSize(n - 1);
    } finally {
      clients.shutdownNow();
    }
    assertThat(limiter.inspect("login:127.0.0.1", one).remaining()).as("counted: the limit, no more").isZero();
  }

  @Test
  void countWhenSettlesAnErrorWithTheStatusItBecomes() throws Exception {
    RateLimitWebFilter filter = RateLimitWebFilter.builder(limiter)
        .rule(rule("fragile", "/**", twoPerMinute).countWhen("#response.status >= 500").build()).build();
    org.springframework.web.server.WebHandler failing = exchange -> exchange.getRequest().getPath().value().equals("/boom")
        ? reactor.core.publisher.Mono.error(new IllegalStateException("boom")) : reactor.core.publisher.Mono.empty();
    try (NettyApp app = new NettyApp(filter, failing)) {
      assertThat(app.get("/fine").statusCode()).isEqualTo(200);
      assertThat(limiter.inspect("fragile:127.0.0.1", twoPerMinute).remaining()).as("given back").isEqualTo(2);
      assertThat(app.get("/boom").statusCode()).isEqualTo(500);
      assertThat(limiter.inspect("fragile:127.0.0.1", twoPerMinute).remaining()).as("the error counted").isEqualTo(1);
    }
  }

  /** cost-after reads the header the handler set: the estimate reserved, the surplus given back, a larger cost charged. */
  @Test
  void costAfterSettlesTheEstimateAtTheResponsesHeader() throws Exception {
    Policy tokens = Policy.of(100, Duration.ofHours(1)).withName("tokens");
    RateLimitWebFilter filter = RateLimitWebFilter.builder(limiter)
        .rule(rule("completions", "/**", tokens).cost("10").costAfter("#response.headers['X-Tokens-Used']")
            .countWhen("#response.status < 500").build()).build();
    org.springframework.web.server.WebHandler upstream = exchange -> {
      String used = exchange.getRequest().getQueryParams().getFirst("used");
      if (used != null) {
        exchange.getResponse().getHeaders().set("x-tokens-used", used);
      }
      return exchange.getRequest().getPath().value().equals("/boom")
          ? reactor.core.publisher.Mono.error(new IllegalStateException("boom")) : reactor.core.publisher.Mono.empty();
    };
    try (NettyApp app = new NettyApp(filter, upstream)) {
      assertThat(app.get("/v1?used=3").statusCode()).isEqualTo(200);
      assertThat(limiter.inspect("completions:127.0.0.1", tokens).remaining()).as("7 given back").isEqualTo(97);
      assertThat(app.get("/v1?used=30").statusCode()).isEqualTo(200);
      assertThat(limiter.inspect("completions:127.0.0.1", tokens).remaining()).as("20 charged beyond").isEqualTo(67);
      assertThat(app.get("/v1").statusCode()).isEqualTo(200);
      assertThat(limiter.inspect("completions:127.0.0.1", tokens).remaining()).as("no header: the estimate")
          .isEqualTo(57);
      assertThat(app.get("/boom?used=50").statusCode()).isEqualTo(500);
      assertThat(limiter.inspect("completions:127.0.0.1", tokens).remaining()).as("not counted").isEqualTo(57);
    }
  }

  @Test
  void aRequestRefusedByALaterRuleGivesBackWhatACountWhenRuleReserved() throws Exception {
    RateLimitWebFilter filter = RateLimitWebFilter.builder(limiter).matchAll(true)
        .rule(rule("login", "/login", twoPerMinute).countWhen("#response.status == 401").build())
        .rule(rule("once", "/login", Policy.parse("1/1m").withName("once")).build()).build();
    try (NettyApp app = new NettyApp(filter)) {
      assertThat(app.get("/login?status=401").statusCode()).isEqualTo(401);
      assertThat(limiter.inspect("login:127.0.0.1", twoPerMinute).remaining()).isEqualTo(1);
      assertThat(app.get("/login?status=401").statusCode()).as("refused by the second rule").isEqualTo(429);
    }
    assertThat(limiter.inspect("login:127.0.0.1", twoPerMinute).remaining())
        .as("the refused request's reservation was given back").isEqualTo(1);
  }

  @Test
  void matchAllChecksEveryRuleAndARuleAnswersWithItsOwnResponse() throws Exception {
    Policy wide = Policy.parse("10/1m").withName("wide");
    DeniedResponse plain = DeniedResponse.builder().status(503).contentType("application/json")
        .body("{\"error\":\"slow down\",\"policy\":\"{{policy}}\",\"retry\":{{retry-after}}}").header("X-Code", "RL-1")
        .build();
    RateLimitWebFilter filter = RateLimitWebFilter.builder(limiter).matchAll(true)
        .headers(new HeaderOptions(true, true))
        .rule(rule("all", "/**", wide).build())
        .rule(rule("search", "/search", Policy.parse("1/1m").withName("search")).deniedResponse(plain).build())
        .build();
    try (NettyApp app = new NettyApp(filter)) {
      HttpResponse<String> first = app.get("/search");
      assertThat(first.headers().firstValue("RateLimit-Policy")).hasValue("\"wide\";q=10;w=60, \"search\";q=1;w=60");
      assertThat(first.headers().firstValue("X-RateLimit-Remaining")).hasValue("0");
      HttpResponse<String> denied = app.get("/search");
      assertThat(denied.statusCode()).isEqualTo(503);
      assertThat(denied.body()).isEqualTo("{\"error\":\"slow down\",\"policy\":\"search\",\"retry\":60}");
      assertThat(denied.headers().firstValue("X-Code")).hasValue("RL-1");
      assertThat(denied.headers().firstValue("Retry-After")).hasValue("60");
    }
    assertThat(limiter.inspect("all:127.0.0.1", wide).remaining()).as("both checked, the denial after 'all'").isEqualTo(8);
  }

  @Test
  void aFailingBackendIsDecidedByTheFailureModeWithoutLimitHeaders() throws Exception {
    RateLimitRule api = rule("api", "/**", twoPerMinute).build();
    try (RateLimiter open = RateLimiter.builder().backend(new DownBackend()).failureMode(FailureMode.FAIL_OPEN).build();
        NettyApp app = new NettyApp(RateLimitWebFilter.builder(open).rule(api).build())) {
      HttpResponse<String> allowed = app.get("/a");
      assertThat(allowed.statusCode()).isEqualTo(200);
      assertThat(allowed.headers().firstValue("RateLimit")).isEmpty();
      assertThat(allowed.headers().firstValue("RateLimit-Policy")).isEmpty();
    }
    try (RateLimiter closed = RateLimiter.builder().backend(new DownBackend()).failureMode(FailureMode.FAIL_CLOSED)
        .failClosedRetryAfter(Duration.ofSeconds(3)).build();
        NettyApp app = new NettyApp(RateLimitWebFilter.builder(closed).rule(api).build())) {
      HttpResponse<String> denied = app.get("/a");
      assertThat(denied.statusCode()).isEqualTo(429);
      assertThat(denied.headers().firstValue("Retry-After")).hasValue("3");
      assertThat(denied.headers().firstValue("RateLimit")).isEmpty();
      assertThat(app.handlerThread.get()).as("the chain never ran").isNull();
    }
  }

  @Test
  void aDeniedHandlerAnswersInsteadAndCountsOnce() throws Exception {
    java.util.List<MultiDecision> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    RateLimitWebFilter filter = RateLimitWebFilter.builder(limiter).rule(rule("api", "/**", twoPerMinute).build())
        .deniedHandler((exchange, decision, configured) -> {
          seen.add(decision);
          exchange.getResponse().getHeaders().set("X-Seen", "1");
          return ExchangeResponses.writeDenied(exchange, decision.decisions(), HeaderOptions.DEFAULT, configured);
        }).build();
    try (NettyApp app = new NettyApp(filter)) {
      app.get("/a");
      app.get("/a");
      HttpResponse<String> denied = app.get("/a");
      assertThat(denied.statusCode()).isEqualTo(429);
      assertThat(denied.headers().firstValue("X-Seen")).hasValue("1");
    }
    assertThat(seen).singleElement().satisfies(d -> assertThat(d.limiting().policy()).isEqualTo(twoPerMinute));
    assertThat(seen.get(0).decisions()).extracting(Decision::allowed).containsExactly(false);
  }

  @Test
  void aRuleReadingWhatAReactiveRequestLacksIsRefusedWhenBuilt() {
    RateLimitRule servletOnly = rule("api", "/**", twoPerMinute).key("#request.servletPath").build();
    assertThatThrownBy(() -> RateLimitWebFilter.builder(limiter).rule(servletOnly).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rule 'api'")
        .hasMessageContaining("servletPath");
  }

  /** A backend whose every call fails, as one whose server is down. */
  static final class DownBackend implements Backend {
    @Override
    public <R> R execute(Command<R> command) {
      throw new IllegalStateException("down");
    }
  }
}

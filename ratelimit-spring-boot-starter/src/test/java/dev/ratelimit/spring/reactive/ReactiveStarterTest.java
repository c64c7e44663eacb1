package dev.ratelimit.spring.reactive;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.annotation.RateLimitExceededException;
import dev.ratelimit.tck.docs.DocPage;
import dev.ratelimit.webflux.RateLimitWebFilter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The starter in a WebFlux application on Reactor Netty, over real HTTP: the reactive filter from
 * {@code ratelimit.filter.*}, and {@code @RateLimited} on methods returning Mono, Flux and
 * CompletionStage, checked once per subscription, a denial answered 429 as on the servlet side.
 */
class ReactiveStarterTest {
  private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private static ConfigurableApplicationContext context;
  private static int port;

  @BeforeAll
  static void start() {
    context = new SpringApplicationBuilder(ReactiveApp.class).web(WebApplicationType.REACTIVE)
        .properties("server.port=0", "server.address=127.0.0.1",
            "ratelimit.policies.api.limit=2", "ratelimit.policies.api.window=1m",
            "ratelimit.filter.rules[0].name=api", "ratelimit.filter.rules[0].paths=/api/**",
            "ratelimit.filter.rules[0].policies=api",
            "ratelimit.filter.rules[1].name=cors", "ratelimit.filter.rules[1].paths=/cors/**",
            "ratelimit.filter.rules[1].key=#headers['Origin']", "ratelimit.filter.rules[1].policies=api")
        .run();
    port = ((WebServerApplicationContext) context).getWebServer().getPort();
  }

  @AfterAll
  static void stop() {
    context.close();
  }

  private static HttpResponse<String> get(String path, String... headers) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10));
    for (int i = 0; i < headers.length; i += 2) {
      request.header(headers[i], headers[i + 1]);
    }
    return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The reactive filter's decisions are counted as the servlet filter's are, per policy and outcome. */
  @Test
  void theFiltersDecisionsAreCountedPerPolicy() throws Exception {
    MeterRegistry meters = context.getBean(MeterRegistry.class);
    double allowed = decisions(meters, "allowed");
    double denied = decisions(meters, "denied");
    String origin = "https://metrics-" + System.nanoTime() + ".example";
    for (int i = 0; i < 3; i++) {
      get("/cors/hello", "Origin", origin);
    }
    assertThat(decisions(meters, "allowed") - allowed).isEqualTo(2);
    assertThat(decisions(meters, "denied") - denied).isEqualTo(1);
  }

  private static double decisions(MeterRegistry meters, String outcome) {
    Counter counter = meters.find("ratelimit.decisions").tag("policy", "api").tag("outcome", outcome).counter();
    return counter == null ? 0 : counter.count();
  }

  @Test
  void theFiltersDenialCarriesTheApplicationsCorsHeaders() throws Exception {
    String app = "https://app.example";
    assertThat(get("/cors/hello", "Origin", app).statusCode()).isEqualTo(200);
    assertThat(get("/cors/hello", "Origin", app).statusCode()).isEqualTo(200);
    HttpResponse<String> denied = get("/cors/hello", "Origin", app);
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(denied.headers().firstValue("Access-Control-Allow-Origin")).hasValue(app);
    assertThat(denied.headers().firstValue("Access-Control-Expose-Headers")).hasValueSatisfying(v ->
        assertThat(v).contains("Retry-After"));

    String other = "https://evil.example";
    get("/cors/hello", "Origin", other);
    get("/cors/hello", "Origin", other);
    HttpResponse<String> refused = get("/cors/hello", "Origin", other);
    assertThat(refused.statusCode()).as("an origin the configuration refuses: still the 429").isEqualTo(429);
    assertThat(refused.headers().firstValue("Access-Control-Allow-Origin")).isEmpty();
  }

  @Test
  void theReactiveFilterIsConfiguredByTheFilterPropertiesAndTheServletOneIsNot() throws Exception {
    assertThat(context.getBeansOfType(RateLimitWebFilter.class)).hasSize(1);
    assertThat(context.getBeanNamesForType(org.springframework.boot.web.servlet.FilterRegistrationBean.class)).isEmpty();
    HttpResponse<String> first = get("/api/hello");
    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.body()).isEqualTo("hi");
    assertThat(first.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=2;w=60");
    assertThat(get("/api/hello").statusCode()).isEqualTo(200);
    HttpResponse<String> denied = get("/api/hello");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(denied.headers().firstValue("Retry-After")).isPresent();
    assertThat(denied.body()).contains("\"violated-policies\":[\"api\"]");
  }

  @Test
  void thePagesExampleIsTheMethodThisTestCalls() {
    DocPage page = DocPage.read("docs/reactive.md");
    page.assertRunBy(page.block("java", "public Mono<String> greet(String name)"),
        "src/test/java/dev/ratelimit/spring/reactive/ReactiveApp.java");
  }

  @Test
  void aRateLimitedMonoIsCheckedPerSubscriptionNotAtAssembly() {
    ReactiveApp.Greetings greetings = context.getBean(ReactiveApp.Greetings.class);
    int before = greetings.calls();
    Mono<String> greeting = greetings.greet("assembly");
    Mono<String> unused = greetings.greet("assembly"); // assembled, never subscribed: never checked
    assertThat(unused).isNotNull();
    assertThat(greetings.calls()).as("nothing runs before a subscription").isEqualTo(before);

    assertThat(greeting.block(Duration.ofSeconds(5))).isEqualTo("hello assembly");
    assertThat(greeting.block(Duration.ofSeconds(5))).as("a second subscription, a second check").isEqualTo("hello assembly");
    Throwable third = greeting.materialize().block(Duration.ofSeconds(5)).getThrowable();
    assertThat(third).isInstanceOf(RateLimitExceededException.class);
    assertThat(greetings.calls()).as("the method ran for the two admitted subscriptions").isEqualTo(before + 2);
  }

  /** #clientIp, #request and #principal of a reactive call are the exchange's, from the Reactor context. */
  @Test
  void aReactiveCallReadsTheRequestVariablesOfItsExchange() throws Exception {
    assertThat(get("/keyed", "X-Api-Key", "k1").statusCode()).isEqualTo(200);
    assertThat(get("/keyed", "X-Api-Key", "k1").statusCode()).as("the same client and key").isEqualTo(429);
    assertThat(get("/keyed", "X-Api-Key", "k2").statusCode()).as("another API key").isEqualTo(200);
    RateLimiter limiter = context.getBean(RateLimiter.class);
    Policy perClient = Policy.of(1, Duration.ofMinutes(1)).withName("per-client");
    assertThat(limiter.inspect("127.0.0.1 k1 null", perClient).remaining()).as("the key the call was counted under")
        .isZero();
    assertThat(limiter.inspect("127.0.0.1 k2 null", perClient).remaining()).isZero();
  }

  @Test
  void aDeniedMonoFromAControllerIsThe429OfTheServletSide() throws Exception {
    assertThat(get("/greet/carol").statusCode()).isEqualTo(200);
    HttpResponse<String> ok = get("/greet/carol");
    assertThat(ok.body()).isEqualTo("hello carol");
    HttpResponse<String> denied = get("/greet/carol");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(denied.headers().firstValue("Retry-After")).hasValue("30");
    assertThat(denied.headers().firstValue("RateLimit")).hasValue("\"greet\";r=0;t=30");
    assertThat(denied.body()).contains("\"status\":429").contains("\"violated-policies\":[\"greet\"]");
  }

  @Test
  void aFluxIsCheckedOncePerSubscriptionAndACompletionStageOncePerCall() {
    ReactiveApp.Greetings greetings = context.getBean(ReactiveApp.Greetings.class);
    Flux<String> stream = greetings.stream("dave");
    assertThat(stream.collectList().block(Duration.ofSeconds(5))).containsExactly("a", "b", "c");
    assertThat(stream.materialize().filter(s -> s.isOnError()).map(s -> s.getThrowable()).blockFirst(Duration.ofSeconds(5)))
        .isInstanceOf(RateLimitExceededException.class);

    assertThat(greetings.future().toCompletableFuture().join()).isEqualTo("done");
    CompletableFuture<String> refused = greetings.future().toCompletableFuture();
    assertThat(refused).failsWithin(Duration.ofSeconds(5)).withThrowableThat()
        .havingRootCause().isInstanceOf(RateLimitExceededException.class);
  }

  @Test
  void waitModeDelaysTheSubscriptionUntilTheLimitHasRoom() {
    ReactiveApp.Greetings greetings = context.getBean(ReactiveApp.Greetings.class);
    List<String> served = Flux.range(0, 3).concatMap(i -> greetings.patient("erin")).collectList()
        .block(Duration.ofSeconds(10));
    assertThat(served).as("every subscription waited for its turn, none was refused")
        .containsExactly("served erin", "served erin", "served erin");
    RateLimiter limiter = context.getBean(RateLimiter.class);
    assertThat(limiter.inspect("erin", Policy.parse("1/300ms").withName("patient")).remaining()).isZero();
  }

  @Test
  void aWaitingSubscriptionChecksAgainOnlyTheKeysThatDenied() {
    ReactiveApp.Greetings greetings = context.getBean(ReactiveApp.Greetings.class);
    List<String> served = Flux.range(0, 2).concatMap(i -> greetings.twoKeys("fay")).collectList()
        .block(Duration.ofSeconds(10));
    assertThat(served).containsExactly("both fay", "both fay");
    RateLimiter limiter = context.getBean(RateLimiter.class);
    assertThat(limiter.inspect("wide:fay", Policy.parse("5/1h").withName("wide")).remaining())
        .as("the wide key was charged once per subscription, not again while the narrow one waited").isEqualTo(3);
  }
}

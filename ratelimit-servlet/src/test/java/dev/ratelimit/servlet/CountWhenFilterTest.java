package dev.ratelimit.servlet;

import dev.ratelimit.http.RateLimitRule;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.tck.docs.DocPage;
import dev.ratelimit.tck.http.StructuredFields;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A rule's {@code count-when}, over HTTP in Jetty: refused while there is no room, charged after the
 * response when the condition holds, also for an exception and an asynchronous request, and the
 * over-admission of requests in flight at once.
 */
class CountWhenFilterTest {
  private final ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
  private final RateLimiter limiter = RateLimiter.builder().clock(clock).build();
  private final Policy failures = Policy.of(3, Duration.ofMinutes(15)).withName("failed-logins");
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

  /** {@code /login?password=right} answers 200, any other 401; {@code /boom} throws; {@code /later} answers 401 asynchronously. */
  static final class Login extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException, ServletException {
      switch (request.getServletPath()) {
        case "/boom" -> throw new ServletException("boom");
        case "/later" -> {
          AsyncContext async = request.startAsync();
          async.start(() -> {
            ((HttpServletResponse) async.getResponse()).setStatus(401);
            async.complete();
          });
        }
        default -> response.setStatus("right".equals(request.getParameter("password")) ? 200 : 401);
      }
    }
  }

  private TestServer serve(RateLimitRule rule, HttpServlet servlet) {
    RateLimitFilter filter = RateLimitFilter.builder(limiter).rule(rule).build();
    server = TestServer.start(context -> {
      for (String path : List.of("/login", "/boom", "/later")) {
        ServletHolder holder = new ServletHolder(servlet);
        holder.setAsyncSupported(true);
        context.addServlet(holder, path);
      }
      FilterHolder holder = new FilterHolder(filter);
      holder.setAsyncSupported(true);
      context.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST));
    });
    return server;
  }

  private RateLimitRule loginRule(String countWhen) {
    return RateLimitRule.builder("login").path("/login", "/boom", "/later").policy(failures).countWhen(countWhen)
        .build();
  }

  private long room() {
    return limiter.inspect("login:127.0.0.1", failures).remaining();
  }

  @Test
  void onlyFailedLoginsCountAndNoneIsLetThroughWithoutRoom() {
    serve(loginRule("#response.status == 401"), new Login());
    for (int i = 0; i < 10; i++) {
      assertThat(server.get("/login?password=right").statusCode()).isEqualTo(200);
    }
    assertThat(room()).as("successes are not counted").isEqualTo(3);
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> failed = server.get("/login?password=wrong");
      assertThat(failed.statusCode()).isEqualTo(401);
      assertThat(StructuredFields.parseList(failed.headers().firstValue("RateLimit").orElseThrow()).get(0).integer("r"))
          .as("the room before this request's outcome").isEqualTo(3 - i);
    }
    assertThat(room()).isZero();
    HttpResponse<String> refused = server.get("/login?password=right");
    assertThat(refused.statusCode()).as("no room: refused, whatever it would have been").isEqualTo(429);
    assertThat(refused.headers().firstValue("Retry-After")).as("GCRA: one failure's worth").hasValue("300");
    clock.advance(Duration.ofMinutes(5)); // GCRA: one failure's worth back
    assertThat(server.get("/login?password=right").statusCode()).isEqualTo(200);
    assertThat(room()).isEqualTo(1);
  }

  @Test
  void anExceptionIsStatus500() {
    serve(loginRule("#response.status >= 500"), new Login());
    assertThat(server.get("/boom").statusCode()).isEqualTo(500);
    assertThat(server.get("/login?password=wrong").statusCode()).isEqualTo(401);
    assertThat(room()).as("the exception counted, the 401 not").isEqualTo(2);
  }

  @Test
  void anAsynchronousRequestIsChargedWhenItCompletes() throws InterruptedException {
    serve(loginRule("#response.status == 401"), new Login());
    assertThat(server.get("/later").statusCode()).isEqualTo(401);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (room() != 2 && System.nanoTime() < deadline) {
      Thread.sleep(5); // completion's listeners may run after the response went out
    }
    assertThat(room()).isEqualTo(2);
  }

  @Test
  void aConditionThatCannotBeDecidedCountsTheRequest() {
    try (RateLimitFilterTest.LogCapture log = new RateLimitFilterTest.LogCapture()) {
      serve(loginRule("#request.userPrincipal.name == 'robot' and #response.status == 401"), new Login());
      assertThat(server.get("/login?password=right").statusCode()).isEqualTo(200);
      assertThat(room()).isEqualTo(2);
      assertThat(log.messages()).filteredOn(m -> m.contains("count-when")).singleElement().asString()
          .endsWith("; taken as true: the request was counted (logged at most once a minute)");
    }
  }

  /**
   * N requests in flight at once, with room for 1: each passes the check before any is charged (the
   * servlet holds them until all have arrived), so all N are admitted, N − 1 beyond the limit, the
   * bound; once they are answered, the charges leave exactly the limit counted.
   */
  @Test
  void requestsInFlightAtOnceAreAdmittedUpToTheirNumberMinusOneBeyondTheLimit() throws Exception {
    int n = 8;
    Policy one = Policy.of(1, Duration.ofMinutes(15)).withName("one");
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger entered = new AtomicInteger();
    HttpServlet held = new HttpServlet() {
      @Override
      protected void service(HttpServletRequest request, HttpServletResponse response) {
        entered.incrementAndGet();
        try {
          release.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        response.setStatus(401);
      }
    };
    serve(RateLimitRule.builder("login").path("/login").policy(one).countWhen("#response.status == 401").build(), held);
    ExecutorService clients = Executors.newFixedThreadPool(n);
    try {
      List<Future<Integer>> answers = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        answers.add(clients.submit(() -> server.get("/login").statusCode()));
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (entered.get() < n && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      release.countDown();
      int admitted = 0;
      for (Future<Integer> answer : answers) {
        admitted += answer.get(30, TimeUnit.SECONDS) == 401 ? 1 : 0;
      }
      assertThat(admitted - one.limit()).as("admitted beyond the limit").isLessThanOrEqualTo(n - 1)
          .isEqualTo(n - 1); // every one was in flight before any was charged: the bound is reached
    } finally {
      clients.shutdownNow();
    }
    assertThat(limiter.inspect("login:127.0.0.1", one).remaining()).as("counted: the limit, no more").isZero();
    assertThat(server.get("/login").statusCode()).isEqualTo(429);
  }

  /** The example of docs/servlet-filter.md, from the file; and a bad condition there, named by its property. */
  @Test
  void thePagesExampleFromTheFile() throws Exception {
    Path file = Files.writeString(dir.resolve("ratelimit.properties"),
        DocPage.read("docs/servlet-filter.md").block("properties", "count-when"));
    assertThat(RateLimitConfig.load(file.toString()).rules().get(0).countWhen()).isEqualTo("#response.status == 401");
    Path bad = Files.writeString(dir.resolve("bad.properties"), Files.readString(file)
        .replace("#response.status", "#response.code"));
    assertThatThrownBy(() -> RateLimitConfig.load(bad.toString())).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ratelimit.rules[0].count-when: rule 'login': count-when expression"
            + " '#response.code == 401' reads 'code' of #response, which has no such property; the response's"
            + " property is status");
    server = TestServer.start(context -> {
      context.addServlet(new ServletHolder(new Login()), "/login");
      FilterHolder holder = new FilterHolder(RateLimitFilter.class);
      holder.setInitParameter(RateLimitFilter.CONFIG_PARAM, file.toString());
      context.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST));
    });
    for (int i = 0; i < 10; i++) {
      assertThat(server.send("POST", "/login?password=right").statusCode()).isEqualTo(200);
    }
    for (int i = 0; i < 5; i++) {
      assertThat(server.send("POST", "/login?password=wrong").statusCode()).isEqualTo(401);
    }
    assertThat(server.send("POST", "/login?password=right").statusCode()).as("locked out").isEqualTo(429);
  }

  @Test
  void countWhenIsCheckedWhenTheRuleIsBuilt() {
    assertThatThrownBy(() -> loginRule("response.status == 401")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("reads 'response' of nothing; variables start with #, e.g. #response");
    assertThatThrownBy(() -> loginRule("#result == false")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("rule 'login': count-when expression '#result == false' reads #result, an unknown"
            + " variable; the variables are #clientIp, #clientNetwork, #path, #method, #headers, #params,"
            + " #pathVariables, #principal, #request, #response");
  }
}

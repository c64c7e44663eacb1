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
 * A rule's {@code count-when}, over HTTP in Jetty: its cost reserved before the request (refused
 * while there is no room), committed after the response when the condition holds and given back
 * otherwise, also for an exception and an asynchronous request; requests in flight at once never
 * pass beyond the limit.
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
        case "/later", "/later-ok" -> {
          AsyncContext async = request.startAsync();
          int status = request.getServletPath().equals("/later") ? 401 : 200;
          async.start(() -> {
            ((HttpServletResponse) async.getResponse()).setStatus(status);
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
      for (String path : List.of("/login", "/boom", "/later", "/later-ok")) {
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
    return RateLimitRule.builder("login").path("/login", "/boom", "/later", "/later-ok").policy(failures).countWhen(countWhen)
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
          .as("the room left while this request held its unit").isEqualTo(2 - i);
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
  void anAsynchronousRequestIsSettledWhenItCompletes() throws InterruptedException {
    serve(loginRule("#response.status == 401"), new Login());
    assertThat(server.get("/later-ok").statusCode()).isEqualTo(200);
    awaitRoom(3); // its unit was held until it completed, then given back
    assertThat(room()).as("a success completed asynchronously is not counted").isEqualTo(3);
    assertThat(server.get("/later").statusCode()).isEqualTo(401);
    assertThat(server.get("/later-ok").statusCode()).isEqualTo(200);
    awaitRoom(2);
    assertThat(room()).as("the failure counted, the success given back").isEqualTo(2);
  }

  /** Completion's listeners may run after the response went out: waits (10 s at most) for the room to be {@code expected}. */
  private void awaitRoom(long expected) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (room() != expected && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
  }

  @Test
  void aRequestRefusedByALaterRuleGivesBackWhatACountWhenRuleReserved() {
    Policy once = Policy.of(1, Duration.ofMinutes(15)).withName("once");
    RateLimitFilter filter = RateLimitFilter.builder(limiter).matchAll(true)
        .rule(loginRule("#response.status == 401"))
        .rule(RateLimitRule.builder("once").path("/login").policy(once).build())
        .build();
    server = TestServer.start(context -> {
      context.addServlet(new ServletHolder(new Login()), "/login");
      context.addFilter(new FilterHolder(filter), "/*", EnumSet.of(DispatcherType.REQUEST));
    });
    assertThat(server.get("/login?password=wrong").statusCode()).isEqualTo(401);
    assertThat(room()).isEqualTo(2);
    assertThat(server.get("/login?password=wrong").statusCode()).as("refused by the second rule").isEqualTo(429);
    assertThat(room()).as("the refused request's reservation was given back").isEqualTo(2);
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
   * N requests in flight at once, with room for 1: the first reserves the unit and is held by the
   * servlet until the others have been answered; each of them finds no room and is refused, so
   * exactly one runs, and its failure leaves exactly the limit counted.
   */
  @Test
  void requestsInFlightAtOnceNeverPassBeyondTheLimit() throws Exception {
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
      int refused = 0;
      List<Future<Integer>> pending = new ArrayList<>(answers);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (refused < n - 1 && System.nanoTime() < deadline) { // all but the one holding the unit
        for (java.util.Iterator<Future<Integer>> it = pending.iterator(); it.hasNext(); ) {
          Future<Integer> answer = it.next();
          if (answer.isDone()) {
            assertThat(answer.get()).isEqualTo(429);
            refused++;
            it.remove();
          }
        }
        Thread.sleep(5);
      }
      assertThat(entered.get()).as("only the request holding the unit runs").isEqualTo(1);
      release.countDown();
      int admitted = 0;
      for (Future<Integer> answer : answers) {
        admitted += answer.get(30, TimeUnit.SECONDS) == 401 ? 1 : 0;
      }
      assertThat(admitted).as("admitted: the limit, none beyond").isEqualTo(one.limit());
      assertThat(entered.get()).isEqualTo(1);
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
            + " properties are status and headers");
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
  void aLimiterWithoutReservationsIsRefusedWhenTheFilterIsBuilt() {
    dev.ratelimit.spi.Backend plain = new dev.ratelimit.spi.Backend() {
      @Override
      public <R> R execute(dev.ratelimit.spi.Command<R> command) {
        throw new UnsupportedOperationException();
      }

      @Override
      public void close() {}
    };
    try (RateLimiter without = RateLimiter.builder().backend(plain).build()) {
      assertThatThrownBy(() -> RateLimitFilter.builder(without).rule(loginRule("#response.status == 401")).build())
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("rule 'login' has count-when, which reserves its cost before the request")
          .hasMessageContaining("does not take reservations");
    }
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

package dev.ratelimit.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.redis.RedisBackend;
import dev.ratelimit.redis.RedisClients;
import dev.ratelimit.http.RateLimitRule;
import dev.ratelimit.tck.redis.RedisServer;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import reactor.blockhound.BlockHound;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * BlockHound proves that no check blocks a non-blocking thread: Reactor Netty's event loops (where
 * the filter runs), Reactor's parallel scheduler, and Netty's threads where a Redis answer
 * completes a check. Every blocking call BlockHound sees on such a thread is recorded (and fails
 * the call); a handler that sleeps on the event loop shows that it watches.
 */
class NonBlockingTest {
  /** The blocking calls seen on non-blocking threads, by method and thread. */
  private static final List<String> BLOCKED = new CopyOnWriteArrayList<>();

  private final List<AutoCloseable> open = new ArrayList<>();

  @BeforeAll
  static void installBlockHound() {
    BlockHound.install(builder -> builder
        // Redisson's worker pool waiting for work while idle: its own threads, not a check's
        .allowBlockingCallsInside("java.util.concurrent.ThreadPoolExecutor", "getTask")
        // the lock around Redisson's list of pending commands: held for an insertion or a removal,
        // it parks a sender only while its I/O thread removes one (no I/O under it)
        .allowBlockingCallsInside("org.redisson.misc.WrappedLock", "execute")
        .blockingMethodCallback(method -> {
          BLOCKED.add(method + " on " + Thread.currentThread().getName());
          throw new Error("blocking call on a non-blocking thread: " + method); // as BlockHound's default
        }));
  }

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : open) {
      c.close();
    }
    BLOCKED.clear();
  }

  private RateLimiter redisLimiter() {
    RedissonClient client = RedisClients.open(RedisServer.shared().url(), Duration.ofSeconds(2), "test");
    open.add(client::shutdown);
    RateLimiter limiter = RateLimiter.builder()
        .backend(RedisBackend.builder(client).keyPrefix("rl-nonblocking-" + UUID.randomUUID()).build())
        .timeout(Duration.ofSeconds(2)).build();
    open.add(limiter);
    return limiter;
  }

  @Test
  void blockHoundSeesASleepOnTheEventLoop() throws Exception {
    try (NettyApp app = new NettyApp((exchange, chain) -> chain.filter(exchange), exchange -> {
      try {
        Thread.sleep(1);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return exchange.getResponse().setComplete();
    })) {
      // a few tries: a request that failed before reaching the handler (a connection refused or
      // reset on a busy machine) shows nothing; what counts is what BlockHound saw
      for (int attempt = 0; attempt < 5 && BLOCKED.isEmpty(); attempt++) {
        try {
          app.get("/sleep");
        } catch (java.io.IOException e) {
          // the connection may close instead of a 500
        }
      }
    }
    assertThat(BLOCKED).anySatisfy(b -> assertThat(b).contains("sleep").contains("reactor-http-"));
  }

  @Test
  void theFilterNeverBlocksTheEventLoopInMemory() throws Exception {
    assertLimitsWithoutBlocking(RateLimiter.inMemory());
  }

  @Test
  void theFilterNeverBlocksTheEventLoopOnRedis() throws Exception {
    assertLimitsWithoutBlocking(redisLimiter());
  }

  @Test
  void checkAllAsyncOnRedisNeverBlocksAParallelThread() {
    RateLimiter limiter = redisLimiter();
    List<Policy> policies = List.of(Policy.parse("3/1m").withName("a"), Policy.parse("5/1h").withName("b"));
    List<Boolean> allowed = Flux.range(0, 5)
        .concatMap(i -> Mono.defer(() -> Mono.fromCompletionStage(limiter.checkAllAsync("k", policies, 1)))
            .subscribeOn(Schedulers.parallel()))
        .map(MultiDecision::allowed)
        .collectList().block(Duration.ofSeconds(10));
    assertThat(allowed).containsExactly(true, true, true, false, false);
    assertThat(BLOCKED).isEmpty();
  }

  private void assertLimitsWithoutBlocking(RateLimiter limiter) throws Exception {
    RateLimitWebFilter filter = RateLimitWebFilter.builder(limiter)
        .rule(RateLimitRule.builder("api").path("/api/**").policy(Policy.parse("5/1m").withName("per-ip")).build())
        .build();
    List<Integer> statuses = new ArrayList<>();
    try (NettyApp app = new NettyApp(filter)) {
      for (int i = 0; i < 8; i++) {
        HttpResponse<String> response = app.get("/api/x");
        statuses.add(response.statusCode());
      }
      assertThat(app.handlerThread.get()).as("the handler ran on an event loop").startsWith("reactor-http-");
    }
    assertThat(statuses).containsExactly(200, 200, 200, 200, 200, 429, 429, 429);
    assertThat(BLOCKED).isEmpty();
    assertReservesAndSettlesWithoutBlocking(limiter);
  }

  /** count-when and cost-after: a reservation before the request, its settle before the commit, and a release on denial. */
  private void assertReservesAndSettlesWithoutBlocking(RateLimiter limiter) throws Exception {
    Policy failures = Policy.parse("6/1m").withName("failures");
    RateLimitWebFilter filter = RateLimitWebFilter.builder(limiter).matchAll(true)
        .rule(RateLimitRule.builder("login").path("/login").policy(failures).cost("2").costAfter("1")
            .countWhen("#response.status == 401").build())
        .rule(RateLimitRule.builder("once").path("/login").policy(Policy.parse("4/1m").withName("once")).build())
        .build();
    List<Integer> statuses = new ArrayList<>();
    String key = "login:127.0.0.1";
    try (NettyApp app = new NettyApp(filter)) {
      for (int i = 0; i < 5; i++) {
        statuses.add(app.get("/login?status=401").statusCode());
      }
    }
    // 2 reserved, 1 committed each; the 5th runs out of 'once', and its reservation is released
    assertThat(statuses).containsExactly(401, 401, 401, 401, 429);
    assertThat(limiter.inspect(key, failures).remaining()).isEqualTo(2);
    assertThat(BLOCKED).isEmpty();
  }
}

package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.FailureMode;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.redisson.config.ConstantDelay;

/**
 * Real outages, real processes, no mocks: several threads check continuously while the Redis
 * server is killed and restarted on the same port, or stalls. Every call must return within the
 * limiter's timeout plus a margin, never throw, and follow the failure mode; the circuit breaker
 * must open and close again on its own, and Redis must decide again (scripts reloaded) within
 * seconds of the restart.
 */
class RedisOutageTest {
  private static final Duration REDIS_TIMEOUT = Duration.ofMillis(100);
  private static final Duration LIMITER_TIMEOUT = Duration.ofMillis(150);
  private static final Duration COOL_DOWN = Duration.ofMillis(500);
  private static final Duration FAIL_CLOSED_RETRY = Duration.ofSeconds(2);
  /** The bound every call is held to: the timeout plus a margin for a loaded test machine. */
  private static final long BOUND_NANOS = TimeUnit.SECONDS.toNanos(1);
  private static final long RECOVERY_NANOS = TimeUnit.SECONDS.toNanos(8);
  private static final int THREADS = 4;
  private static final long LIMIT = 1_000_000;
  private static final double SHARE = 0.5;

  private final Policy gcra = Policy.of(LIMIT, Duration.ofHours(1)).withName("api");
  private final Policy window = Policy.of(LIMIT, Duration.ofHours(1), Algorithm.FIXED_WINDOW).withName("quota");

  private RedisServer server;
  private RedissonClient client;

  @BeforeEach
  void startServer() {
    server = RedisServer.start();
    client = client(server.url());
  }

  @AfterEach
  void stopServer() {
    client.shutdown();
    server.close();
  }

  /**
   * A client sized for a limiter: no retries (a script is never sent twice), short timeouts, and a
   * constant 100 ms between reconnection attempts (Redisson's default backs off from 100 ms to 10 s
   * with jitter; with outages of 1 and 4 s both reconnected within about 100 ms of the restart).
   */
  static RedissonClient client(String url) {
    Config config = new Config();
    config.useSingleServer().setAddress(url)
        .setTimeout((int) REDIS_TIMEOUT.toMillis())
        .setConnectTimeout(200)
        .setRetryAttempts(0)
        .setReconnectionDelay(new ConstantDelay(Duration.ofMillis(100)))
        .setConnectionMinimumIdleSize(THREADS)
        .setConnectionPoolSize(2 * THREADS);
    return Redisson.create(config);
  }

  private RateLimiter limiter(FailureMode mode, RateLimitListener listener) {
    return RateLimiter.builder()
        .backend(RedisBackend.builder(client).keyPrefix(Clients.uniquePrefix()).timeout(REDIS_TIMEOUT).build())
        .timeout(LIMITER_TIMEOUT)
        .failureMode(mode)
        .failClosedRetryAfter(FAIL_CLOSED_RETRY)
        .localFallbackShare(SHARE)
        .circuitBreaker(3, COOL_DOWN)
        .listener(listener)
        .build();
  }

  // ---------------------------------------------------------------- the server dies

  @ParameterizedTest
  @EnumSource(FailureMode.class)
  @Timeout(60)
  void aKilledAndRestartedServerIsSurvivedAndRecoveredFrom(FailureMode mode) throws Exception {
    Transitions transitions = new Transitions();
    try (RateLimiter limiter = limiter(mode, transitions); Load load = new Load(limiter)) {
      load.awaitRedisDecisions(50);
      long pid = server.pid();
      server.stop(); // ends the process by its PID and waits for it to exit
      long stopped = System.nanoTime();
      assertThat(ProcessHandle.of(pid)).as("redis-server pid %s is gone", pid).isEmpty();
      Thread.sleep(1_000);
      long restarting = System.nanoTime();
      server.restart(); // same port, empty dataset, no scripts
      long restarted = System.nanoTime();
      long recoveredAt = load.awaitRedisDecisionStartedAfter(restarted, RECOVERY_NANOS);
      // From `restarting`, not `restarted`: restart() returns once the server answers PING, and a
      // probe may reach the new server, and close the breaker, before it does.
      long closedAt = transitions.awaitClosedAfter(restarting, load, RECOVERY_NANOS);
      load.runFor(200);
      load.stop();

      report("kill and restart, " + mode, load, restarted, recoveredAt);
      System.out.printf("  stopped at 0 ms, restarted at %+.0f ms; breaker: %s%n",
          (restarted - stopped) / 1e6, transitions.relativeTo(stopped));
      load.assertEveryCallReturnedInBoundWithoutException();
      List<Call> down = load.callsWithin(stopped, restarting);
      assertThat(down).as("calls while the server was down").hasSizeGreaterThan(20)
          .allSatisfy(c -> assertFailureModeDecided(mode, c));
      assertThat(transitions.list).as("the breaker opened").contains("CLOSED->OPEN");
      assertThat(recoveredAt).as("Redis decided again after the restart").isNotEqualTo(Long.MAX_VALUE);
      assertThat(closedAt).as("the breaker closed again on its own, no restart of the limiter; breaker: %s",
              transitions.relativeTo(stopped))
          .isNotEqualTo(Long.MAX_VALUE);
      assertThat(load.callsStartedAfter(closedAt)).as("and Redis went on deciding").anySatisfy(c ->
          assertThat(c.byRedis()).isTrue());
    }
  }

  private static void assertFailureModeDecided(FailureMode mode, Call c) {
    switch (mode) {
      case FAIL_OPEN -> {
        assertThat(c.allowed).as("%s", c).isTrue();
        assertThat(c.degraded).as("%s", c).isTrue();
      }
      case FAIL_CLOSED -> {
        assertThat(c.allowed).as("%s", c).isFalse();
        assertThat(c.degraded).as("%s", c).isTrue();
        assertThat(c.retryAfter).as("%s", c).isEqualTo(FAIL_CLOSED_RETRY);
      }
      case LOCAL_FALLBACK -> {
        assertThat(c.allowed).as("%s", c).isTrue();
        assertThat(c.degraded).as("a real local decision: %s", c).isFalse();
        assertThat(c.remaining).as("from the local half of the limit: %s", c).isLessThan((long) (LIMIT * SHARE));
      }
    }
  }

  // ---------------------------------------------------------------- the server stalls

  @ParameterizedTest
  @ValueSource(strings = {"DEBUG SLEEP 1", "CLIENT PAUSE 1000"})
  @Timeout(60)
  void aStalledServerCostsTheTimeoutNotTheStall(String stall) throws Exception {
    Transitions transitions = new Transitions();
    try (RateLimiter limiter = limiter(FailureMode.FAIL_OPEN, transitions); Load load = new Load(limiter)) {
      load.awaitRedisDecisions(50);
      long stalling = System.nanoTime();
      CompletableFuture<Object> stalled = CompletableFuture.supplyAsync(
          () -> server.command((Object[]) stall.split(" ")));
      Thread.sleep(1_000);
      stalled.get(5, TimeUnit.SECONDS); // DEBUG SLEEP answers when it ends; CLIENT PAUSE at once
      long stallEnded = stalling + TimeUnit.SECONDS.toNanos(1);
      long recoveredAt = load.awaitRedisDecisionStartedAfter(stallEnded, RECOVERY_NANOS);
      long closedAt = transitions.awaitClosedAfter(stalling, load, RECOVERY_NANOS);
      load.runFor(200);
      load.stop();

      report(stall, load, stallEnded, recoveredAt);
      System.out.printf("  stalled at 0 ms for 1 s; breaker: %s%n", transitions.relativeTo(stalling));
      load.assertEveryCallReturnedInBoundWithoutException();
      long middle = stalling + TimeUnit.MILLISECONDS.toNanos(300);
      List<Call> stalledCalls = load.callsWithin(middle, stallEnded - TimeUnit.MILLISECONDS.toNanos(100));
      assertThat(stalledCalls).as("calls in the middle of the stall").hasSizeGreaterThan(5)
          .allSatisfy(c -> assertFailureModeDecided(FailureMode.FAIL_OPEN, c));
      assertThat(transitions.list).contains("CLOSED->OPEN");
      assertThat(recoveredAt).isNotEqualTo(Long.MAX_VALUE);
      assertThat(closedAt).isNotEqualTo(Long.MAX_VALUE);
    }
  }

  private static void report(String what, Load load, long restoredAt, long recoveredAt) {
    System.out.printf("RedisOutageTest %s: %,d calls, worst-case latency %.1f ms (bound %d ms), "
            + "Redis decided again %.0f ms after the server was back%n",
        what, load.calls.size(), load.worstNanos() / 1e6, TimeUnit.NANOSECONDS.toMillis(BOUND_NANOS),
        (recoveredAt - restoredAt) / 1e6);
  }

  // ---------------------------------------------------------------- the load

  /** What one call returned, and when it started and ended (System.nanoTime). */
  private record Call(String kind, long start, long end, boolean allowed, boolean degraded, long remaining,
      Duration retryAfter) {
    long nanos() {
      return end - start;
    }

    /** A decision Redis made: not degraded, and out of the shared limit, not the local half. */
    boolean byRedis() {
      return !degraded && remaining >= LIMIT * SHARE;
    }
  }

  private static final class Transitions implements RateLimitListener {
    final List<String> list = new CopyOnWriteArrayList<>();
    final List<Long> at = new CopyOnWriteArrayList<>();

    @Override
    public void onCircuitStateChange(CircuitState from, CircuitState to) {
      at.add(System.nanoTime());
      list.add(from + "->" + to);
    }

    /**
     * When the breaker last closed after {@code after}, once Redis has decided a call started after
     * that; MAX_VALUE if that does not happen within {@code patienceNanos}.
     */
    long awaitClosedAfter(long after, Load load, long patienceNanos) throws InterruptedException {
      long deadline = System.nanoTime() + patienceNanos;
      while (System.nanoTime() < deadline) {
        int last = list.size() - 1;
        if (last >= 0 && list.get(last).equals("HALF_OPEN->CLOSED") && at.get(last) > after) {
          long closed = at.get(last);
          if (load.callsStartedAfter(closed).stream().anyMatch(Call::byRedis)) {
            return closed;
          }
        }
        Thread.sleep(10);
      }
      return Long.MAX_VALUE;
    }

    String relativeTo(long t0) {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < list.size(); i++) {
        sb.append(String.format("%s at %+.0f ms; ", list.get(i), (at.get(i) - t0) / 1e6));
      }
      return sb.toString();
    }
  }

  /** {@link #THREADS} threads calling check, checkAsync and checkAll in turn, until stopped. */
  private final class Load implements AutoCloseable {
    final ConcurrentLinkedQueue<Call> calls = new ConcurrentLinkedQueue<>();
    final List<Throwable> escaped = Collections.synchronizedList(new ArrayList<>());
    final AtomicBoolean running = new AtomicBoolean(true);
    final List<Thread> threads = new ArrayList<>();
    final CountDownLatch done = new CountDownLatch(THREADS);

    Load(RateLimiter limiter) {
      for (int t = 0; t < THREADS; t++) {
        String key = "user-" + t;
        Thread thread = new Thread(() -> {
          try {
            for (int i = 0; running.get(); i++) {
              call(limiter, key, i % 3);
              LockSupport.parkNanos(200_000); // a busy caller, not a spinning one: memory stays small
            }
          } finally {
            done.countDown();
          }
        }, "outage-load-" + t);
        thread.setDaemon(true);
        threads.add(thread);
        thread.start();
      }
    }

    private void call(RateLimiter limiter, String key, int kind) {
      long start = System.nanoTime();
      try {
        switch (kind) {
          case 0 -> {
            Decision d = limiter.check(key, gcra);
            record("check", start, d);
          }
          case 1 -> {
            Decision d = limiter.checkAsync(key, gcra, 1).toCompletableFuture().get(10, TimeUnit.SECONDS);
            record("checkAsync", start, d);
          }
          default -> {
            MultiDecision m = limiter.checkAll(key, List.of(gcra, window), 1);
            Decision d = m.decisions().get(0);
            assertThat(m.allowed()).isEqualTo(d.allowed());
            record("checkAll", start, d);
          }
        }
      } catch (Throwable e) { // anything, also an assertion or a stage that failed: it escaped
        escaped.add(e);
      }
    }

    private void record(String kind, long start, Decision d) {
      calls.add(new Call(kind, start, System.nanoTime(), d.allowed(), d.isDegraded(), d.remaining(), d.retryAfter()));
    }

    void awaitRedisDecisions(int n) throws InterruptedException {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (calls.stream().filter(Call::byRedis).count() < n && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertThat(calls.stream().filter(Call::byRedis).count()).as("Redis decides before the outage")
          .isGreaterThanOrEqualTo(n);
    }

    /** When the first call started after {@code after} that Redis decided; MAX_VALUE if none in time. */
    long awaitRedisDecisionStartedAfter(long after, long patienceNanos) throws InterruptedException {
      long deadline = System.nanoTime() + patienceNanos;
      Predicate<Call> recovered = c -> c.start > after && c.byRedis();
      while (System.nanoTime() < deadline) {
        long first = calls.stream().filter(recovered).mapToLong(c -> c.start).min().orElse(Long.MAX_VALUE);
        if (first != Long.MAX_VALUE) {
          return first;
        }
        Thread.sleep(10);
      }
      return Long.MAX_VALUE;
    }

    void runFor(long millis) throws InterruptedException {
      Thread.sleep(millis);
    }

    void stop() throws InterruptedException {
      running.set(false);
      assertThat(done.await(10, TimeUnit.SECONDS)).as("the load threads ended").isTrue();
    }

    List<Call> callsWithin(long from, long to) {
      return calls.stream().filter(c -> c.start >= from && c.end <= to).toList();
    }

    List<Call> callsStartedAfter(long t) {
      return calls.stream().filter(c -> c.start > t).toList();
    }

    long worstNanos() {
      return calls.stream().mapToLong(Call::nanos).max().orElse(0);
    }

    void assertEveryCallReturnedInBoundWithoutException() {
      assertThat(escaped).as("nothing escaped a check").isEmpty();
      assertThat(calls).as("every call returned within the timeout and a margin")
          .allSatisfy(c -> assertThat(c.nanos()).as("%s", c).isLessThan(BOUND_NANOS));
    }

    @Override
    public void close() throws InterruptedException {
      running.set(false);
      done.await(10, TimeUnit.SECONDS);
    }
  }
}

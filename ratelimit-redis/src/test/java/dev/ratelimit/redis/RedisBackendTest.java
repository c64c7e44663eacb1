package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.FailureMode;
import dev.ratelimit.ManualClock;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.tck.redis.RedisServer;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;

/**
 * What only a real Redis shows: TTLs, byte-identical state after denials, NOSCRIPT and restarts,
 * no double counting after a timeout, one round trip per check. Runs on a server it starts itself,
 * since it flushes scripts, stalls and restarts it.
 */
class RedisBackendTest {
  private static RedisServer server;
  private static RedissonClient client;

  private final ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
  private String prefix;
  private RateLimiter limiter;

  @BeforeAll
  static void startServer() {
    server = RedisServer.start();
    client = Clients.single(server.url());
  }

  @AfterAll
  static void stopServer() {
    client.shutdown();
    server.close();
  }

  @BeforeEach
  void newLimiter() {
    prefix = Clients.uniquePrefix();
    limiter = limiter(RedisBackend.builder(client).keyPrefix(prefix).build(), FailureMode.FAIL_OPEN);
  }

  @AfterEach
  void closeLimiter() {
    limiter.close();
  }

  private RateLimiter limiter(RedisBackend backend, FailureMode mode) {
    return RateLimiter.builder().clock(clock).backend(backend).failureMode(mode).build();
  }

  @Test
  void gcraStoresTheTwoNumberFormThatEarlierVersionsReadAndReadsABareNumberToo() {
    Policy even = Policy.of(10, Duration.ofMinutes(1)); // T = 6 s exactly
    Policy odd = Policy.of(7, Duration.ofMinutes(1));   // T = 8,571,428 + 4/7 µs
    long t = clock.epochMicros();
    limiter.check("even", even);
    limiter.check("odd", odd);
    String evenKey = prefix + ":{even}:" + even.name() + ":gcra";
    String oddKey = prefix + ":{odd}:" + odd.name() + ":gcra";
    assertThat(server.command("GET", evenKey)).isEqualTo((t + 6_000_000) + " 0");
    assertThat(server.command("GET", oddKey)).isEqualTo((t + 8_571_428) + " 4");
    // the TTL is resetAfter (6 s), counting down in real time since the write: a loaded machine takes a while to ask
    assertThat((Long) server.command("PTTL", evenKey)).isBetween(4_000L, 6_000L);

    // a tat three intervals ahead, in both forms: the same state, 10 − 3 = 7 available
    for (String stored : List.of((t + 18_000_000) + " 0", String.valueOf(t + 18_000_000))) {
      server.command("SET", evenKey, stored, "PX", "60000");
      assertThat(limiter.inspect("even", even).remaining()).as(stored).isEqualTo(7);
    }
  }

  private List<String> ourKeys() {
    List<String> keys = new ArrayList<>();
    String cursor = "0";
    do {
      List<?> page = (List<?>) server.command("SCAN", cursor, "MATCH", prefix + ":*", "COUNT", "1000");
      cursor = (String) page.get(0);
      for (Object k : (List<?>) page.get(1)) {
        keys.add((String) k);
      }
    } while (!cursor.equals("0"));
    return keys;
  }

  // ---------------------------------------------------------------- TTLs

  @Test
  void noKeyIsEverWithoutATtlAndAllExpire() throws Exception {
    SplittableRandom random = new SplittableRandom(5);
    List<Policy> policies = new ArrayList<>();
    for (Algorithm algorithm : Algorithm.values()) {
      policies.add(Policy.of(5, Duration.ofMillis(100 + 50 * algorithm.ordinal()), algorithm));
    }
    for (int i = 0; i < 2_000; i++) {
      String key = "k" + random.nextInt(40);
      Policy p = policies.get(random.nextInt(policies.size()));
      long cost = 1 + random.nextInt(3);
      if (random.nextInt(10) == 0) {
        limiter.checkAll(key, List.of(policies.get(0), policies.get(3), policies.get(4)), cost);
      } else {
        limiter.check(key, p, cost);
      }
      clock.advanceMicros(random.nextLong(20_000));
    }
    List<String> keys = ourKeys();
    assertThat(keys).hasSizeGreaterThan(40);
    long longest = 0;
    for (String k : keys) {
      long pttl = (Long) server.command("PTTL", k);
      assertThat(pttl).as("PTTL of %s: -1 is a key without a TTL, -2 one that just expired", k)
          .isNotEqualTo(-1L).isGreaterThanOrEqualTo(-2L);
      longest = Math.max(longest, pttl);
    }
    assertThat(longest).as("no TTL outlives twice the longest window").isLessThanOrEqualTo(700);
    Thread.sleep(longest + 50); // real time is the point: Redis expires keys on its own clock
    assertThat(ourKeys()).isEmpty();
  }

  // ---------------------------------------------------------------- denied checks write nothing

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void aDeniedCheckLeavesEveryKeyByteIdentical(Algorithm algorithm) {
    Policy p = Policy.of(3, Duration.ofMinutes(1), algorithm);
    limiter.check("victim", p, 2);
    clock.advanceMicros(1_000);
    limiter.check("victim", p, 1);
    Map<String, Object> before = snapshot();
    assertThat(before).isNotEmpty();
    clock.advanceMicros(1_000);
    for (int i = 0; i < 5; i++) {
      assertThat(limiter.check("victim", p, 1 + i % 3).allowed()).isFalse();
      limiter.inspect("victim", p);
    }
    MultiDecision multi = limiter.checkAll("victim",
        List.of(p, Policy.of(100, Duration.ofMinutes(1)).withName("other")), 1);
    assertThat(multi.allowed()).isFalse();
    assertThat(snapshot()).isEqualTo(before);
  }

  /** Each of our keys: its DUMP bytes and its absolute expiry time. */
  private Map<String, Object> snapshot() {
    Map<String, Object> state = new LinkedHashMap<>();
    for (String k : ourKeys().stream().sorted().toList()) {
      state.put(k, List.of(server.command("DUMP", k), server.command("PEXPIRETIME", k)));
    }
    return state;
  }

  // ---------------------------------------------------------------- NOSCRIPT and restarts

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void scriptFlushMidRunIsInvisible(Algorithm algorithm) throws Exception {
    Policy p = Policy.of(10, Duration.ofMinutes(1), algorithm);
    Policy other = Policy.of(10, Duration.ofMinutes(1)).withName("other");
    assertThat(limiter.check("k", p).remaining()).isEqualTo(9);
    server.command("SCRIPT", "FLUSH");
    Decision afterFlush = limiter.check("k", p);
    assertThat(afterFlush.isDegraded()).isFalse();
    assertThat(afterFlush.remaining()).as("counted once").isEqualTo(8);
    server.command("SCRIPT", "FLUSH");
    Decision async = limiter.checkAsync("k", p, 1).toCompletableFuture().get(5, TimeUnit.SECONDS);
    assertThat(async.isDegraded()).isFalse();
    assertThat(async.remaining()).isEqualTo(7);
    server.command("SCRIPT", "FLUSH");
    MultiDecision all = limiter.checkAll("k", List.of(p, other), 1);
    assertThat(all.decisions()).extracting(Decision::remaining).containsExactly(6L, 9L);
    server.command("SCRIPT", "FLUSH");
    assertThat(limiter.inspect("k", p).remaining()).isEqualTo(6);
  }

  @Test
  void aScriptLoadThatThrowsAfterNoScriptFailsThatCheckAloneAndFreesItsPlaceInFlight() {
    AtomicInteger throwsLeft = new AtomicInteger();
    RedissonClient throwing = throwingScriptLoads(client, throwsLeft);
    List<Throwable> errors = new CopyOnWriteArrayList<>();
    RateLimitListener listener = new RateLimitListener() {
      @Override
      public void onBackendError(Throwable error) {
        errors.add(error);
      }
    };
    // one call in flight: a place never given back would hold every later check in the queue
    RedisBackend backend = RedisBackend.builder(throwing).keyPrefix(prefix).batchesInFlight(1).build();
    try (RateLimiter l = RateLimiter.builder().clock(clock).backend(backend).failureMode(FailureMode.FAIL_CLOSED)
        .circuitBreaker(0, Duration.ZERO).listener(listener).build()) {
      Policy p = Policy.of(10, Duration.ofMinutes(1));
      assertThat(l.check("k", p).remaining()).isEqualTo(9);
      server.command("SCRIPT", "FLUSH");
      throwsLeft.set(1);
      Decision failed = l.check("k", p);
      assertThat(failed.isDegraded()).as("the failure mode decides").isTrue();
      assertThat(errors).singleElement().extracting(RedisBackendTest::rootCause).isSameAs(SCRIPT_LOAD_THROWN);
      Decision next = l.check("k", p);
      assertThat(next.isDegraded()).as("the lane sends again").isFalse();
      assertThat(next.remaining()).as("the failed check never ran").isEqualTo(8);
    }
  }

  private static final IllegalStateException SCRIPT_LOAD_THROWN = new IllegalStateException("client shutting down");

  private static Throwable rootCause(Throwable e) {
    while (e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }

  /** {@code real}, but its scripts' {@code scriptLoadAsync} throws while {@code throwsLeft} is positive. */
  private static RedissonClient throwingScriptLoads(RedissonClient real, AtomicInteger throwsLeft) {
    return proxy(RedissonClient.class, real, (method, args) -> {
      Object result = invoke(real, method, args);
      if (!method.getName().equals("getScript")) {
        return result;
      }
      RScript script = (RScript) result;
      return proxy(RScript.class, script, (m, a) -> {
        if (m.getName().equals("scriptLoadAsync") && throwsLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
          throw SCRIPT_LOAD_THROWN;
        }
        return invoke(script, m, a);
      });
    });
  }

  private interface Call {
    Object call(Method method, Object[] args) throws Throwable;
  }

  private static <T> T proxy(Class<T> type, T target, Call call) {
    return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
        (self, method, args) -> call.call(method, args)));
  }

  private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  @Test
  void aRestartedServerServesTheNextChecks() throws Exception {
    RedisServer own = RedisServer.start();
    RedissonClient ownClient = Clients.single(own.url());
    try (RateLimiter l = limiter(RedisBackend.builder(ownClient).keyPrefix(prefix).build(), FailureMode.FAIL_CLOSED)) {
      Policy p = Policy.of(5, Duration.ofMinutes(1));
      assertThat(l.check("k", p, 2).remaining()).isEqualTo(3);
      own.restart(); // empty dataset, no scripts
      Decision next = null;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (System.nanoTime() < deadline) { // Redisson reconnects in the background
        next = l.check("k", p, 2);
        if (!next.isDegraded()) {
          break;
        }
        Thread.sleep(50);
      }
      assertThat(next.isDegraded()).as("a check succeeds after the restart").isFalse();
      assertThat(next.remaining()).as("a fresh state on the restarted server").isEqualTo(3);
      assertThat(l.check("k", p, 2).remaining()).isEqualTo(1);
    } finally {
      ownClient.shutdown();
      own.close();
    }
  }

  // ---------------------------------------------------------------- never counted twice

  /**
   * While the server sleeps, checks time out (the failure mode answers); Redisson must not resend
   * them, so afterwards the counter shows each check applied at most once.
   */
  @Test
  void aTimedOutCheckIsNeverCountedTwice() throws Exception {
    // a client with Redisson's resending defaults: the backend must override them per call
    org.redisson.config.Config config = new org.redisson.config.Config();
    config.useSingleServer().setAddress(server.url()).setRetryAttempts(4);
    RedissonClient resending = org.redisson.Redisson.create(config);
    RedisBackend shortTimeout = RedisBackend.builder(resending).keyPrefix(prefix)
        .timeout(Duration.ofMillis(100)).build();
    Policy p = Policy.of(1_000, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW);
    try (RateLimiter l = limiter(shortTimeout, FailureMode.FAIL_OPEN)) {
      assertThat(l.check("k", p).remaining()).isEqualTo(999);
      CompletableFuture<Object> sleep = CompletableFuture.supplyAsync(() -> server.command("DEBUG", "SLEEP", "0.6"));
      Thread.sleep(50); // let the sleep start first
      List<CompletableFuture<Decision>> inFlight = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        inFlight.add(l.checkAsync("k", p, 1).toCompletableFuture());
      }
      Decision sync = l.check("k", p);
      int degraded = sync.isDegraded() ? 1 : 0;
      for (CompletableFuture<Decision> f : inFlight) {
        Decision d = f.get(5, TimeUnit.SECONDS);
        assertThat(d.allowed()).as("a timeout is never a denial").isTrue();
        degraded += d.isDegraded() ? 1 : 0;
      }
      sleep.get(5, TimeUnit.SECONDS);
      assertThat(degraded).as("checks timed out while Redis slept").isPositive();
      Thread.sleep(200); // the stalled commands now run on the server, once each
      long applied = 1_000 - l.inspect("k", p).remaining();
      assertThat(applied).as("1 before + at most 21 during the stall").isBetween(1L, 22L);
      Object stored = server.command("GET", new RedisKeys(prefix).of("k", p).get(0)); // "start count"
      assertThat(Long.parseLong(((String) stored).split(" ")[1])).isEqualTo(applied);
    } finally {
      resending.shutdown();
    }
  }

  // ---------------------------------------------------------------- one round trip

  @Test
  void oneRoundTripPerCheckAndPerCheckAll() {
    Policy a = Policy.of(1_000, Duration.ofMinutes(1));
    Policy b = Policy.of(1_000, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW);
    Policy c = Policy.of(1_000, Duration.ofMinutes(1), Algorithm.SLIDING_WINDOW);
    limiter.check("warm", a);
    limiter.checkAll("warm", List.of(a, b, c), 1);
    server.command("CONFIG", "RESETSTAT");
    for (int i = 0; i < 100; i++) {
      limiter.check("k" + i, a);
    }
    Map<String, Long> afterChecks = commandCalls();
    assertThat(afterChecks.get("evalsha")).isEqualTo(100);
    server.command("CONFIG", "RESETSTAT");
    for (int i = 0; i < 100; i++) {
      limiter.checkAll("k" + i, List.of(a, b, c), 1);
    }
    Map<String, Long> afterCheckAll = commandCalls();
    assertThat(afterCheckAll.get("evalsha")).isEqualTo(100);
  }

  /** Calls per command from INFO commandstats, excluding the INFO and CONFIG of this test. */
  private static Map<String, Long> commandCalls() {
    Map<String, Long> calls = new LinkedHashMap<>();
    Matcher m = Pattern.compile("cmdstat_([a-z|_]+):calls=(\\d+)").matcher(server.info("commandstats"));
    while (m.find()) {
      calls.put(m.group(1), Long.parseLong(m.group(2)));
    }
    return calls;
  }
}

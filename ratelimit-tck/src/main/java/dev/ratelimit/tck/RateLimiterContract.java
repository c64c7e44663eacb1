package dev.ratelimit.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.KeyedPolicy;
import dev.ratelimit.ManualClock;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.spi.Backend;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The contract every backend passes, unchanged: extend it and supply a backend.
 *
 * <pre>{@code
 * class InMemoryContractTest extends RateLimiterContract {
 *   protected Backend newBackend() { return InMemoryBackend.create(); }
 * }
 * }</pre>
 *
 * <p>Each test runs on a {@link ManualClock} that starts at epoch second 1,700,000,000 and uses keys
 * of its own, so a backend may share storage across tests.
 */
public abstract class RateLimiterContract {
  /** Where every test's clock starts: aligned to 10 s windows (and 20 s into a minute). */
  protected static final Instant START = Instant.ofEpochSecond(1_700_000_000L);

  private final List<Throwable> backendErrors = new java.util.concurrent.CopyOnWriteArrayList<>();
  protected ManualClock clock;
  protected RateLimiter limiter;
  private String keyPrefix;

  /** A new backend for one test; it may share storage with others. */
  protected abstract Backend newBackend();

  /**
   * Whether the limiter under test has its near-cache on; null (the default) leaves the limiter's
   * default (on for a remote backend). A remote backend should also be run with it off: the
   * near-cache answers repeated denials with the Java twin of the algorithm, so only then does
   * every answer of the suite come from the backend itself.
   */
  protected Boolean nearCache() {
    return null;
  }

  /**
   * {@code keys} (distinct, each already unique to the test), or keys made from them that this
   * backend checks all or nothing together. The default returns them unchanged: the backend is
   * atomic across any keys. A backend atomic per group of keys only (Redis Cluster, per hash slot)
   * returns keys of one group, e.g. each with a suffix that puts it in the first key's slot.
   */
  protected List<String> checkedTogether(List<String> keys) {
    return keys;
  }

  @BeforeEach
  void setUpLimiter(TestInfo info) {
    clock = ManualClock.at(START);
    backendErrors.clear();
    limiter = correctnessLimiter(clock, newBackend(), backendErrors, nearCache());
    keyPrefix = "tck:" + info.getTestMethod().map(m -> m.getName()).orElse("test") + ":"
        + UUID.randomUUID() + ":";
  }

  @AfterEach
  void closeLimiter() {
    limiter.close();
    assertThat(backendErrors).as("backend errors: the contract is about answers, not failure modes").isEmpty();
  }

  /**
   * A limiter for correctness tests: a long timeout, no circuit breaker, and every backend error
   * recorded in {@code errors} (a test fails on any), so a failure mode never stands in for an answer.
   */
  static RateLimiter correctnessLimiter(ManualClock clock, Backend backend, List<Throwable> errors,
      Boolean nearCache) {
    RateLimiter.Builder builder = RateLimiter.builder();
    if (nearCache != null) {
      builder.nearCache(nearCache);
    }
    return builder.clock(clock).backend(backend)
        .timeout(Duration.ofSeconds(30))
        .circuitBreaker(0, Duration.ofSeconds(1))
        .listener(new RateLimitListener() {
          @Override
          public void onBackendError(Throwable error) {
            errors.add(error);
          }
        })
        .build();
  }

  /** A key unique to this test. */
  protected String key(String name) {
    return keyPrefix + name;
  }

  protected static Policy policy(Algorithm algorithm, long limit, Duration window) {
    return Policy.of(limit, window).withAlgorithm(algorithm);
  }

  protected void advanceMicros(long micros) {
    clock.advanceMicros(micros);
  }

  private static long micros(Duration d) {
    return d.getSeconds() * 1_000_000L + d.getNano() / 1_000;
  }

  // ---------------------------------------------------------------- allowed, denied, remaining

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void admitsTheLimitThenDenies(Algorithm algorithm) {
    Policy p = policy(algorithm, 5, Duration.ofSeconds(10));
    String k = key("a");
    for (int i = 1; i <= 5; i++) {
      Decision d = limiter.check(k, p);
      assertThat(d.allowed()).as("check %d", i).isTrue();
      assertThat(d.remaining()).as("remaining after check %d", i).isEqualTo(5 - i);
      assertThat(d.retryAfter()).isZero();
      assertThat(d.policy()).isEqualTo(p);
      assertThat(d.limit()).isEqualTo(5);
    }
    Decision denied = limiter.check(k, p);
    assertThat(denied.allowed()).isFalse();
    assertThat(denied.remaining()).isZero();
    assertThat(denied.retryAfter()).isPositive();
    assertThat(denied.delay()).isZero();
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void keysAreIndependent(Algorithm algorithm) {
    Policy p = policy(algorithm, 2, Duration.ofSeconds(10));
    assertThat(limiter.check(key("x"), p, 2).allowed()).isTrue();
    assertThat(limiter.check(key("x"), p).allowed()).isFalse();
    assertThat(limiter.check(key("y"), p, 2).allowed()).isTrue();
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void costsGreaterThanOne(Algorithm algorithm) {
    Policy p = policy(algorithm, 10, Duration.ofSeconds(10));
    String k = key("cost");
    assertThat(limiter.check(k, p, 3).remaining()).isEqualTo(7);
    assertThat(limiter.check(k, p, 3).remaining()).isEqualTo(4);
    assertThat(limiter.check(k, p, 3).remaining()).isEqualTo(1);
    Decision denied = limiter.check(k, p, 3);
    assertThat(denied.allowed()).isFalse();
    assertThat(denied.remaining()).isEqualTo(1);
    Decision one = limiter.check(k, p, 1);
    assertThat(one.allowed()).isTrue();
    assertThat(one.remaining()).isZero();
    assertThat(limiter.check(k, p, 10).allowed()).isFalse();
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void costEqualToCapacityPassesOnAFreshKey(Algorithm algorithm) {
    Policy p = policy(algorithm, 7, Duration.ofSeconds(1));
    Decision d = limiter.check(key("full"), p, 7);
    assertThat(d.allowed()).isTrue();
    assertThat(d.remaining()).isZero();
  }

  /**
   * A cost equal to the capacity on a key already in use waits until the whole capacity is free:
   * 4 per 10 s, one unit at the start, then 4 (ARCHITECTURE §4; the sliding window counter needs
   * the window after next, where the unit no longer weighs).
   */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void costEqualToCapacityOnAKeyInUseWaitsForTheWholeCapacity(Algorithm algorithm) {
    Policy p = policy(algorithm, 4, Duration.ofSeconds(10));
    String k = key("full-later");
    assertThat(limiter.check(k, p).allowed()).isTrue();
    Decision d = limiter.check(k, p, 4);
    assertThat(d.allowed()).isFalse();
    Duration expected = switch (algorithm) {
      case FIXED_WINDOW, SLIDING_LOG -> Duration.ofSeconds(10);
      case SLIDING_WINDOW -> Duration.ofSeconds(20);
      case TOKEN_BUCKET, GCRA, LEAKY_BUCKET -> Duration.ofMillis(2_500);
    };
    assertThat(d.retryAfter()).isEqualTo(expected);
    advanceMicros(expected.toNanos() / 1_000 - 1);
    assertThat(limiter.check(k, p, 4).allowed()).as("1 µs before").isFalse();
    advanceMicros(1);
    assertThat(limiter.check(k, p, 4).allowed()).as("at retryAfter").isTrue();
  }

  // ---------------------------------------------------------------- retryAfter, resetAfter

  /**
   * On a random trace of costs and clock steps, every denial's retryAfter is exact: the same check
   * is still denied 1 µs before it and passes at it.
   */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void retryAfterIsExactToTheMicrosecond(Algorithm algorithm) {
    SplittableRandom random = new SplittableRandom(42 + algorithm.ordinal());
    Policy p = policy(algorithm, 7, Duration.ofMillis(3_001)).withBurst(5);
    String k = key("retry");
    int denials = 0;
    for (int step = 0; step < 300; step++) {
      long cost = 1 + random.nextInt((int) Math.min(3, p.capacity()));
      Decision d = limiter.check(k, p, cost);
      if (!d.allowed()) {
        denials++;
        long r = micros(d.retryAfter());
        assertThat(r).as("retryAfter of a denial").isPositive();
        advanceMicros(r - 1);
        Decision before = limiter.check(k, p, cost);
        assertThat(before.allowed()).as("step %d: still denied 1 µs before retryAfter %d µs", step, r)
            .isFalse();
        assertThat(micros(before.retryAfter())).isEqualTo(1);
        advanceMicros(1);
        assertThat(limiter.check(k, p, cost).allowed())
            .as("step %d: allowed at exactly retryAfter %d µs", step, r).isTrue();
      }
      advanceMicros(random.nextLong(600_000));
    }
    assertThat(denials).as("the trace must exercise denials").isGreaterThan(20);
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void resetAfterIsWhenTheStateIsFreshAgain(Algorithm algorithm) {
    Policy p = policy(algorithm, 10, Duration.ofSeconds(10));
    String k = key("reset-after");
    advanceMicros(1_234_567);
    limiter.check(k, p, 4);
    advanceMicros(2_000_000);
    Decision d = limiter.check(k, p, 3);
    assertThat(d.allowed()).isTrue();
    long reset = micros(d.resetAfter());
    assertThat(reset).isPositive();
    advanceMicros(reset - 1);
    assertThat(limiter.inspect(k, p).remaining()).as("1 µs before resetAfter").isLessThan(10);
    advanceMicros(1);
    Decision fresh = limiter.inspect(k, p);
    assertThat(fresh.remaining()).as("at resetAfter").isEqualTo(10);
    assertThat(fresh.resetAfter()).isZero();
  }

  // ---------------------------------------------------------------- nothing consumed

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void deniedChecksConsumeNothing(Algorithm algorithm) {
    Policy p = policy(algorithm, 4, Duration.ofSeconds(8));
    String k = key("denied");
    limiter.check(k, p, 3);
    Decision first = limiter.check(k, p, 2);
    assertThat(first.allowed()).isFalse();
    for (int i = 0; i < 60; i++) {
      long cost = 2 + i % 3;
      assertThat(limiter.check(k, p, cost).allowed()).as("cost %d", cost).isFalse();
    }
    Decision last = limiter.check(k, p, 2);
    assertThat(last).isEqualTo(first);
    advanceMicros(micros(first.retryAfter()));
    assertThat(limiter.check(k, p, 2).allowed()).isTrue();
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void inspectConsumesNothing(Algorithm algorithm) {
    Policy p = policy(algorithm, 3, Duration.ofSeconds(5));
    String k = key("inspect");
    Decision fresh = limiter.inspect(k, p);
    assertThat(fresh.allowed()).isTrue();
    assertThat(fresh.remaining()).isEqualTo(3);
    for (int i = 0; i < 20; i++) {
      limiter.inspect(k, p);
    }
    limiter.check(k, p, 2);
    Decision afterTwo = limiter.inspect(k, p);
    assertThat(afterTwo.remaining()).isEqualTo(1);
    assertThat(afterTwo.allowed()).isTrue();
    assertThat(limiter.inspect(k, p)).isEqualTo(afterTwo);
    assertThat(limiter.check(k, p, 1).allowed()).isTrue();
    Decision exhausted = limiter.inspect(k, p);
    assertThat(exhausted.allowed()).isFalse();
    assertThat(exhausted.remaining()).isZero();
    assertThat(exhausted.retryAfter()).isEqualTo(limiter.check(k, p).retryAfter());
  }

  /**
   * peekAll answers as checkAll of the same cost would, to the microsecond, and consumes nothing:
   * allowed exactly while the room covers the cost, {@code remaining} the room now, a denial's
   * {@code retryAfter} the exact wait for that cost (not for one unit).
   */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void peekAllAnswersAsCheckAllAndConsumesNothing(Algorithm algorithm) {
    Policy small = policy(algorithm, 5, Duration.ofSeconds(10)).withName("small");
    Policy roomy = policy(algorithm, 50, Duration.ofSeconds(10)).withName("roomy");
    List<Policy> both = List.of(small, roomy);
    String k = key("peek");
    MultiDecision fresh = limiter.peekAll(k, both, 2);
    assertThat(fresh.allowed()).isTrue();
    assertThat(fresh.decisions()).extracting(Decision::remaining).containsExactly(5L, 50L);
    for (int i = 0; i < 10; i++) {
      assertThat(limiter.peekAll(k, both, 2)).isEqualTo(fresh);
    }
    assertThat(limiter.checkAll(k, both, 2).allowed()).isTrue();
    assertThat(limiter.checkAll(k, both, 2).allowed()).isTrue();
    MultiDecision oneLeft = limiter.peekAll(k, both, 2);
    assertThat(oneLeft.allowed()).as("1 left of small, cost 2").isFalse();
    assertThat(oneLeft.decisions()).extracting(Decision::remaining).containsExactly(1L, 46L);
    assertThat(limiter.peekAll(k, both, 1).allowed()).as("cost 1 fits").isTrue();
    assertThat(limiter.inspect(k, small).remaining()).as("peeks consumed nothing").isEqualTo(1);
    MultiDecision checked = limiter.checkAll(k, both, 2);
    assertThat(checked.allowed()).isFalse();
    assertThat(oneLeft.limiting().retryAfter()).as("the wait for cost 2").isEqualTo(checked.limiting().retryAfter())
        .isPositive();
    advanceMicros(micros(oneLeft.limiting().retryAfter()) - 1);
    assertThat(limiter.peekAll(k, both, 2).allowed()).as("1 µs before retryAfter").isFalse();
    advanceMicros(1);
    assertThat(limiter.peekAll(k, both, 2).allowed()).as("at retryAfter").isTrue();
    assertThat(limiter.checkAll(k, both, 2).allowed()).isTrue();
  }

  /** A reset forgets the previous window of a sliding window counter too, and nothing of other policies or keys. */
  @Test
  void resetForgetsEveryWindowOfItsPolicyAndNothingElse() {
    Policy sw = policy(Algorithm.SLIDING_WINDOW, 4, Duration.ofSeconds(10)).withName("sw");
    Policy other = policy(Algorithm.FIXED_WINDOW, 4, Duration.ofSeconds(10)).withName("other");
    String k = key("reset-sw");
    String neighbour = key("reset-sw-neighbour");
    limiter.check(k, sw, 4);
    limiter.check(k, other, 3);
    limiter.check(neighbour, sw, 2);
    advanceMicros(10_000_000); // the 4 now weigh from the previous window
    assertThat(limiter.inspect(k, sw).remaining()).isZero();
    limiter.reset(k, sw);
    assertThat(limiter.inspect(k, sw).remaining()).as("the previous window forgotten too").isEqualTo(4);
    clock.set(START); // back in the window where the other policy counted 3
    assertThat(limiter.inspect(k, other).remaining()).as("another policy of the key").isEqualTo(1);
    assertThat(limiter.inspect(neighbour, sw).remaining()).as("another key").isEqualTo(2);
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void resetForgetsTheKey(Algorithm algorithm) {
    Policy p = policy(algorithm, 3, Duration.ofMinutes(1));
    String k = key("reset");
    limiter.check(k, p, 3);
    assertThat(limiter.check(k, p).allowed()).isFalse();
    limiter.reset(k, p);
    assertThat(limiter.inspect(k, p).remaining()).isEqualTo(3);
    assertThat(limiter.check(k, p, 3).allowed()).isTrue();
  }

  /** tryAcquire answers as check's allowed() and consumes the same. */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void tryAcquireAnswersAndConsumesAsCheck(Algorithm algorithm) {
    Policy p = policy(algorithm, 3, Duration.ofMinutes(1));
    String k = key("try-acquire");
    assertThat(limiter.tryAcquire(k, p, 2)).isTrue();
    assertThat(limiter.inspect(k, p).remaining()).isEqualTo(1);
    assertThat(limiter.tryAcquire(k, p, 2)).as("2 of the 1 left").isFalse();
    assertThat(limiter.inspect(k, p).remaining()).as("a refused call consumes nothing").isEqualTo(1);
    assertThat(limiter.tryAcquire(k, p)).isTrue();
    assertThat(limiter.tryAcquire(k, p)).isFalse();
    assertThat(limiter.check(k, p).allowed()).isFalse();
  }

  // ---------------------------------------------------------------- validation

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void badInputIsRefusedBeforeAnythingIsConsumed(Algorithm algorithm) {
    Policy p = policy(algorithm, 5, Duration.ofSeconds(10)).withBurst(4);
    String k = key("bad");
    long capacity = p.capacity();
    assertThatThrownBy(() -> limiter.check(k, p, capacity + 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cost " + (capacity + 1))
        .hasMessageContaining("capacity " + capacity);
    assertThatThrownBy(() -> limiter.check(k, p, 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cost");
    assertThatThrownBy(() -> limiter.check(k, p, -3))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-3");
    assertThatThrownBy(() -> limiter.check("", p))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key");
    assertThatThrownBy(() -> limiter.check(null, p))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key");
    assertThatThrownBy(() -> limiter.check(k, null))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("policy");
    assertThatThrownBy(() -> limiter.checkAll(k, List.of(p, Policy.of(1, Duration.ofSeconds(1))), 2))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cost 2");
    assertThatThrownBy(() -> limiter.checkAsync(k, p, capacity + 1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(limiter.check(k, p, capacity).allowed()).as("nothing was consumed").isTrue();
  }

  // ---------------------------------------------------------------- namespaces and keys

  @Test
  void policiesNeverShareStateUnlessNameAndAlgorithmMatch() {
    String k = key("ns");
    Policy a = policy(Algorithm.FIXED_WINDOW, 2, Duration.ofSeconds(10)).withName("a");
    Policy b = policy(Algorithm.FIXED_WINDOW, 2, Duration.ofSeconds(10)).withName("b");
    Policy aGcra = a.withAlgorithm(Algorithm.GCRA);
    assertThat(limiter.check(k, a, 2).allowed()).isTrue();
    assertThat(limiter.check(k, a).allowed()).isFalse();
    assertThat(limiter.check(k, b, 2).allowed()).as("another name").isTrue();
    assertThat(limiter.check(k, aGcra, 2).allowed()).as("another algorithm").isTrue();
    Policy aRaised = policy(Algorithm.FIXED_WINDOW, 4, Duration.ofSeconds(10)).withName("a");
    assertThat(limiter.check(k, aRaised, 2).allowed()).as("same name, raised limit, same state").isTrue();
    assertThat(limiter.check(k, aRaised).allowed()).isFalse();
  }

  /**
   * A named policy's numbers changed at run time (same name, new limit): the next check uses the
   * new numbers on the state the key already has, nothing is wiped.
   */
  @Test
  void aFixedWindowKeepsItsCountUnderANewLimit() {
    String k = key("changed");
    Policy v1 = Policy.of(5, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW).withName("api");
    Policy v2 = Policy.of(10, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW).withName("api");
    Policy v3 = Policy.of(3, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW).withName("api");
    assertThat(limiter.check(k, v1, 3).remaining()).isEqualTo(2); // START is 20 s into a minute
    Decision raised = limiter.check(k, v2);
    assertThat(raised.allowed()).isTrue();
    assertThat(raised.remaining()).as("10 - (3 + 1): the count was kept").isEqualTo(6);
    Decision lowered = limiter.check(k, v3);
    assertThat(lowered.allowed()).as("4 already counted against a limit of 3").isFalse();
    assertThat(lowered.remaining()).isZero();
    assertThat(lowered.retryAfter()).as("until the window ends").isEqualTo(Duration.ofSeconds(40));
    assertThat(limiter.check(k, v2).remaining()).as("back to 10: still the same count").isEqualTo(5);
  }

  /** The same for GCRA: the theoretical arrival time is kept and read at the new rate. */
  @Test
  void gcraKeepsItsTheoreticalArrivalTimeUnderANewRate() {
    String k = key("changed");
    Policy v1 = Policy.of(10, Duration.ofMinutes(1)).withName("api"); // T = 6 s
    Policy v2 = Policy.of(20, Duration.ofMinutes(1)).withName("api"); // T = 3 s, burst 20
    Policy v3 = Policy.of(2, Duration.ofMinutes(1)).withName("api");  // T = 30 s, burst 2
    assertThat(limiter.check(k, v1, 5).remaining()).isEqualTo(5); // tat = t + 30 s
    Decision raised = limiter.check(k, v2);
    assertThat(raised.allowed()).isTrue();
    assertThat(raised.remaining()).as("30 s of debt is 10 units at the new rate, + 1").isEqualTo(9);
    assertThat(raised.resetAfter()).isEqualTo(Duration.ofSeconds(33));
    Decision lowered = limiter.check(k, v3);
    assertThat(lowered.allowed()).as("33 s of debt exceeds a 60 s burst only after this one: "
        + "33 + 30 - 60 > 0").isFalse();
    assertThat(lowered.retryAfter()).isEqualTo(Duration.ofSeconds(3));
    advanceMicros(3_000_000);
    assertThat(limiter.check(k, v3).allowed()).isTrue();
  }

  @Test
  void anyStringIsAKeyAndKeysNeverCollide() {
    Policy p = Policy.of(1, Duration.ofMinutes(1)).withName("p");
    Policy pc = Policy.of(1, Duration.ofMinutes(1)).withName("p:c");
    Policy braces = Policy.of(1, Duration.ofMinutes(1)).withName("{p}");
    String base = key("");
    List<String> keys = List.of(base + "a:b", base + "a", base + "a:b:c", base + "{a}", base + "{a",
        base + "a}", base + "a b", base + "a\tb", base + "ключ-鍵-🔑", base + "a\nb", base + "\u0000",
        base + "x".repeat(10_240), base + "x".repeat(10_239) + "y", base + "%", base + "\\");
    for (String k : keys) {
      assertThat(limiter.check(k, p).allowed()).as("first use of %s", k.length() > 40 ? k.length() + " chars" : k)
          .isTrue();
    }
    for (String k : keys) {
      assertThat(limiter.check(k, p).allowed()).isFalse();
    }
    // "a" under "p:c" must not be "a:c" under "p" and so on
    assertThat(limiter.check(base + "a", pc).allowed()).isTrue();
    assertThat(limiter.check(base + "a:b", braces).allowed()).isTrue();
    assertThat(limiter.check(base + "{a}", braces).allowed()).isTrue();
  }

  // ---------------------------------------------------------------- checkAll

  @Test
  void checkAllIsAllOrNothingForEveryAlgorithmAsTheMemberThatHadRoom() {
    for (Algorithm algorithm : Algorithm.values()) {
      String k = key("all-" + algorithm);
      Policy roomy = policy(algorithm, 5, Duration.ofMinutes(1)).withName("roomy");
      Policy exhausted = policy(Algorithm.SLIDING_LOG, 2, Duration.ofMinutes(1)).withName("exhausted");
      assertThat(limiter.check(k, exhausted, 2).allowed()).isTrue();
      MultiDecision denied = limiter.checkAll(k, List.of(roomy, exhausted), 2);
      assertThat(denied.allowed()).isFalse();
      assertThat(limiter.inspect(k, roomy).remaining()).as("%s consumed nothing", algorithm).isEqualTo(5);
    }
  }

  @Test
  void checkAllIsAllOrNothingAcrossAlgorithms() {
    String k = key("all");
    Policy perSecond = policy(Algorithm.SLIDING_LOG, 3, Duration.ofSeconds(1)).withName("second");
    Policy perMinute = policy(Algorithm.FIXED_WINDOW, 5, Duration.ofMinutes(1)).withName("minute");
    Policy bucket = policy(Algorithm.GCRA, 10, Duration.ofMinutes(1)).withBurst(4).withName("bucket");
    List<Policy> all = List.of(perSecond, perMinute, bucket);

    MultiDecision first = limiter.checkAll(k, all, 3);
    assertThat(first.allowed()).isTrue();
    assertThat(first.decisions()).extracting(Decision::remaining).containsExactly(0L, 2L, 1L);
    assertThat(first.limiting().policy()).isEqualTo(perSecond);

    MultiDecision denied = limiter.checkAll(k, all, 1);
    assertThat(denied.allowed()).isFalse();
    assertThat(denied.decisions()).extracting(Decision::allowed).containsExactly(false, true, true);
    assertThat(denied.limiting().policy()).isEqualTo(perSecond);
    assertThat(limiter.inspect(k, perMinute).remaining()).as("nothing consumed").isEqualTo(2);
    assertThat(limiter.inspect(k, bucket).remaining()).as("nothing consumed").isEqualTo(1);

    advanceMicros(1_000_000);
    MultiDecision twoDeny = limiter.checkAll(k, all, 3);
    assertThat(twoDeny.allowed()).isFalse();
    assertThat(twoDeny.decisions()).extracting(Decision::allowed).containsExactly(true, false, false);
    Decision limiting = twoDeny.limiting();
    assertThat(limiting.policy()).as("the longest retryAfter").isEqualTo(perMinute);
    assertThat(limiting.retryAfter()).isEqualTo(Duration.ofSeconds(39));
    assertThat(limiter.inspect(k, perSecond).remaining()).as("nothing consumed").isEqualTo(3);

    MultiDecision ok = limiter.checkAll(k, all, 1);
    assertThat(ok.allowed()).isTrue();
    assertThat(ok.decisions()).extracting(Decision::remaining).containsExactly(2L, 1L, 0L);
    assertThat(ok.limiting().policy()).isEqualTo(bucket);
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void checkAllOfOnePolicyEqualsCheck(Algorithm algorithm) {
    Policy p = policy(algorithm, 4, Duration.ofSeconds(2));
    SplittableRandom random = new SplittableRandom(7);
    for (int i = 0; i < 60; i++) {
      long cost = 1 + random.nextInt(2);
      Decision single = limiter.check(key("single"), p, cost);
      MultiDecision multi = limiter.checkAll(key("multi"), List.of(p), cost);
      assertThat(multi.decisions()).containsExactly(single);
      assertThat(multi.allowed()).isEqualTo(single.allowed());
      advanceMicros(random.nextLong(400_000));
    }
  }

  @Test
  void checkAllRefusesDuplicatePolicies() {
    Policy p = Policy.of(3, Duration.ofSeconds(1));
    assertThatThrownBy(() -> limiter.checkAll(key("dup"), List.of(p, p), 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(p.name());
    assertThatThrownBy(() -> limiter.checkAll(key("dup"), List.of(), 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("policies");
  }

  // ---------------------------------------------------------------- checkAll across keys

  @Test
  void checkAllAcrossKeysConsumesEveryPairOrNone() {
    String a = key("a");
    String b = key("b");
    Policy perUser = policy(Algorithm.FIXED_WINDOW, 5, Duration.ofMinutes(1)).withName("user");
    Policy perTenant = policy(Algorithm.GCRA, 10, Duration.ofSeconds(10)).withName("tenant");
    Policy perRoute = policy(Algorithm.SLIDING_LOG, 3, Duration.ofSeconds(1)).withName("route");
    List<KeyedPolicy> checks = List.of(KeyedPolicy.of(a, perUser), KeyedPolicy.of(b, perTenant),
        KeyedPolicy.of(a, perRoute));

    MultiDecision first = limiter.checkAll(checks, 2);
    assertThat(first.allowed()).isTrue();
    assertThat(first.decisions()).extracting(Decision::policy).containsExactly(perUser, perTenant, perRoute);
    assertThat(first.decisions()).extracting(Decision::remaining).containsExactly(3L, 8L, 1L);
    assertThat(first.decisions()).extracting(Decision::retryAfterMicros).containsExactly(0L, 0L, 0L);
    assertThat(limiter.inspect(a, perUser).remaining()).isEqualTo(3);
    assertThat(limiter.inspect(b, perTenant).remaining()).isEqualTo(8);
    assertThat(limiter.inspect(a, perRoute).remaining()).isEqualTo(1);
    assertThat(limiter.inspect(b, perUser).remaining()).as("b was not checked against perUser").isEqualTo(5);

    MultiDecision denied = limiter.checkAll(checks, 2);
    assertThat(denied.allowed()).isFalse();
    assertThat(denied.decisions()).extracting(Decision::allowed).containsExactly(true, true, false);
    Decision route = denied.decisions().get(2);
    assertThat(route.remaining()).isEqualTo(1);
    assertThat(route.retryAfterMicros()).as("the first two units leave the 1 s log").isEqualTo(1_000_000);
    assertThat(denied.limiting()).isEqualTo(route);
    assertThat(limiter.inspect(a, perUser).remaining()).as("nothing consumed").isEqualTo(3);
    assertThat(limiter.inspect(b, perTenant).remaining()).as("nothing consumed").isEqualTo(8);
    assertThat(limiter.inspect(a, perRoute).remaining()).as("nothing consumed").isEqualTo(1);

    advanceMicros(route.retryAfterMicros() - 1);
    assertThat(limiter.checkAll(checks, 2).allowed()).as("1 µs early").isFalse();
    advanceMicros(1);
    MultiDecision again = limiter.checkAll(checks, 2);
    assertThat(again.allowed()).isTrue();
    assertThat(again.decisions()).extracting(Decision::remaining).containsExactly(1L, 7L, 1L);
  }

  /** A pair that denies, listed first, leaves every other key unconsumed, for every algorithm. */
  @Test
  void checkAllAcrossKeysDeniedByItsFirstPairConsumesNoOtherKey() {
    for (Algorithm algorithm : Algorithm.values()) {
      String full = key("full-" + algorithm);
      String other = key("other-" + algorithm);
      String third = key("third-" + algorithm);
      Policy roomy = policy(algorithm, 5, Duration.ofMinutes(1)).withName("roomy");
      Policy exhausted = policy(Algorithm.SLIDING_LOG, 2, Duration.ofMinutes(1)).withName("exhausted");
      assertThat(limiter.check(full, exhausted, 2).allowed()).isTrue();
      MultiDecision denied = limiter.checkAll(List.of(KeyedPolicy.of(full, exhausted), KeyedPolicy.of(other, roomy),
          KeyedPolicy.of(third, roomy), KeyedPolicy.of(full, roomy)), 2);
      assertThat(denied.allowed()).isFalse();
      assertThat(denied.decisions()).extracting(Decision::allowed).containsExactly(false, true, true, true);
      assertThat(denied.decisions().get(0).retryAfterMicros()).isEqualTo(60_000_000);
      assertThat(limiter.inspect(other, roomy).remaining()).as("%s consumed nothing", algorithm).isEqualTo(5);
      assertThat(limiter.inspect(third, roomy).remaining()).as("%s consumed nothing", algorithm).isEqualTo(5);
      assertThat(limiter.inspect(full, roomy).remaining()).as("%s consumed nothing", algorithm).isEqualTo(5);
    }
  }

  /** A pair that denies, listed last, undoes nothing: no pair before it consumed (see {@link #checkedTogether}). */
  @Test
  void checkAllAcrossKeysDeniedByItsLastPairConsumesNoOtherKey() {
    for (Algorithm algorithm : Algorithm.values()) {
      List<String> together = checkedTogether(List.of(key("full-" + algorithm), key("x-" + algorithm),
          key("y-" + algorithm), key("z-" + algorithm)));
      String full = together.get(0);
      Policy roomy = policy(algorithm, 5, Duration.ofMinutes(1)).withName("roomy");
      Policy exhausted = policy(Algorithm.SLIDING_LOG, 2, Duration.ofMinutes(1)).withName("exhausted");
      assertThat(limiter.check(full, exhausted, 2).allowed()).isTrue();
      List<String> others = together.subList(1, 4);
      List<KeyedPolicy> checks = new ArrayList<>();
      others.forEach(k -> checks.add(KeyedPolicy.of(k, roomy)));
      checks.add(KeyedPolicy.of(full, exhausted));
      MultiDecision denied = limiter.checkAll(checks, 2);
      assertThat(denied.allowed()).isFalse();
      assertThat(denied.decisions()).extracting(Decision::allowed).containsExactly(true, true, true, false);
      for (String k : others) {
        assertThat(limiter.inspect(k, roomy).remaining()).as("%s consumed nothing", algorithm).isEqualTo(5);
      }
    }
  }

  /**
   * Two keys with a policy each decide exactly as one key with both policies: the same states, all
   * or nothing, to the microsecond, denials' would-pass members included.
   */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void checkAllAcrossKeysDecidesAsOneKeysCheckAllOfTheSamePolicies(Algorithm algorithm) {
    Policy p = policy(algorithm, 4, Duration.ofSeconds(2)).withName("p");
    Policy q = policy(Algorithm.GCRA, 3, Duration.ofSeconds(1)).withName("q");
    List<String> together = checkedTogether(List.of(key("x"), key("y")));
    List<KeyedPolicy> across = List.of(KeyedPolicy.of(together.get(0), p), KeyedPolicy.of(together.get(1), q));
    SplittableRandom random = new SplittableRandom(11);
    int denials = 0;
    for (int i = 0; i < 60; i++) {
      long cost = 1 + random.nextInt(3);
      MultiDecision one = limiter.checkAll(key("one"), List.of(p, q), cost);
      MultiDecision two = i % 2 == 0 ? limiter.checkAll(across, cost)
          : limiter.checkAllAsync(across, cost).toCompletableFuture().join();
      assertThat(two).as("check %s", i).isEqualTo(one);
      denials += one.allowed() ? 0 : 1;
      advanceMicros(random.nextLong(500_000));
    }
    assertThat(denials).as("the run must deny some").isPositive();
  }

  @Test
  void checkAllAcrossKeysOfOneKeyIsCheckAll() {
    Policy p = Policy.of(3, Duration.ofSeconds(1)).withName("p");
    Policy q = Policy.of(5, Duration.ofSeconds(1)).withName("q");
    for (int i = 0; i < 5; i++) {
      MultiDecision same = limiter.checkAll(List.of(KeyedPolicy.of(key("k"), p), KeyedPolicy.of(key("k"), q)), 1);
      assertThat(same).isEqualTo(limiter.checkAll(key("mirror"), List.of(p, q), 1));
    }
  }

  @Test
  void checkAllAcrossKeysRefusesBadInputAndConsumesNothing() {
    Policy p = Policy.of(3, Duration.ofSeconds(1));
    Policy small = Policy.of(1, Duration.ofSeconds(1)).withName("small");
    String a = key("a");
    assertThatThrownBy(() -> limiter.checkAll(List.of(KeyedPolicy.of(a, p), KeyedPolicy.of(key("b"), p),
        KeyedPolicy.of(a, p)), 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(p.name()).hasMessageContaining(a.substring(0, 20)).hasMessageContaining("twice");
    assertThatThrownBy(() -> limiter.checkAll(List.<KeyedPolicy>of(), 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("checks");
    assertThatThrownBy(() -> limiter.checkAllAsync(List.<KeyedPolicy>of(), 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("checks");
    assertThatThrownBy(() -> limiter.checkAll(List.of(KeyedPolicy.of(a, p), KeyedPolicy.of(key("b"), small)), 2))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("small");
    assertThatThrownBy(() -> limiter.checkAll(List.of(KeyedPolicy.of(a, p), KeyedPolicy.of(key("b"), p)), 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cost");
    assertThatThrownBy(() -> KeyedPolicy.of("", p)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("key");
    assertThatThrownBy(() -> KeyedPolicy.of(a, null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("policy");
    assertThat(limiter.inspect(a, p).remaining()).as("nothing consumed").isEqualTo(3);
  }

  /**
   * Shadow policies never deny across keys either: when only a shadow pair denies, the enforced
   * pairs are checked again alone and consume once.
   */
  @Test
  void checkAllAcrossKeysLetsAShadowPairsDenialThrough() {
    Policy enforced = Policy.of(5, Duration.ofMinutes(1)).withName("enforced");
    Policy dark = Policy.of(1, Duration.ofMinutes(1)).withName("dark");
    String a = key("a");
    String b = key("b");
    List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
    try (RateLimiter shadowing = RateLimiter.builder().clock(clock).backend(newBackend())
        .timeout(Duration.ofSeconds(30)).circuitBreaker(0, Duration.ofSeconds(1))
        .shadowPolicies(java.util.Set.of("dark"))
        .listener(new RateLimitListener() {
          @Override
          public void onBackendError(Throwable error) {
            errors.add(error);
          }
        }).build()) {
      // the shadow pair first: in a backend that is all or nothing per group of keys, its group goes first
      List<KeyedPolicy> checks = List.of(KeyedPolicy.of(b, dark), KeyedPolicy.of(a, enforced));
      assertThat(shadowing.checkAll(checks, 1).allowed()).isTrue();
      MultiDecision second = shadowing.checkAll(checks, 1);
      assertThat(second.allowed()).as("only the shadow pair denied").isTrue();
      assertThat(second.decisions().get(0).remaining()).isZero();
      assertThat(second.decisions().get(0).retryAfterMicros()).isZero();
      assertThat(second.decisions().get(1).remaining()).isEqualTo(3);
      assertThat(shadowing.checkAllAsync(checks, 1).toCompletableFuture().join().allowed()).isTrue();
      assertThat(shadowing.inspect(a, enforced).remaining()).as("consumed once per check").isEqualTo(2);
      assertThat(shadowing.inspect(b, dark).remaining()).isZero();
    }
    assertThat(errors).isEmpty();
  }

  // ---------------------------------------------------------------- async

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void checkAsyncAnswersAsCheckDoes(Algorithm algorithm) throws Exception {
    Policy p = policy(algorithm, 3, Duration.ofSeconds(3));
    List<Decision> async = new ArrayList<>();
    List<Decision> sync = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      async.add(limiter.checkAsync(key("async"), p, 1).toCompletableFuture().get());
      sync.add(limiter.check(key("sync"), p, 1));
      advanceMicros(150_000);
    }
    assertThat(async).isEqualTo(sync);
    assertThat(async).extracting(Decision::allowed).containsExactly(true, true, true, false, false);
  }

  // ---------------------------------------------------------------- long runs, equivalences

  /**
   * A day of overload (each denied check is retried at exactly its retryAfter) admits
   * {@code B + L·elapsed/W} ± 1, with W/L not a whole number of microseconds.
   */
  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA", "LEAKY_BUCKET", "SLIDING_LOG"})
  void aDayOfOverloadDoesNotDrift(Algorithm algorithm) {
    long limit = 7;
    Duration window = Duration.ofSeconds(100); // T = 14,285,714.29 µs
    long burst = algorithm.usesBurst() ? 3 : limit;
    Policy p = policy(algorithm, limit, window).withBurst(burst);
    String k = key("drift");
    SplittableRandom random = new SplittableRandom(11);
    long elapsed = Duration.ofDays(1).toNanos() / 1_000;
    long end = micros(Duration.between(Instant.EPOCH, START)) + elapsed;
    long admitted = 0;
    for (int checks = 0; ; checks++) {
      assertThat(checks).as("checks in the run: each denial's retryAfter must let the next pass")
          .isLessThan(200_000);
      Decision d = limiter.check(k, p);
      if (d.allowed()) {
        admitted++;
        if (algorithm.usesBurst()) { // a bucket absorbs gaps shorter than T; a log would lose them
          advanceMicros(random.nextLong(2_000_000));
        }
      } else {
        advanceMicros(micros(d.retryAfter()));
      }
      if (micros(Duration.between(Instant.EPOCH, clock.instant())) > end) {
        break;
      }
    }
    long expected = burst + limit * elapsed / micros(window);
    assertThat(admitted).isBetween(expected - 1, expected + 1);
  }

  /** TOKEN_BUCKET, GCRA and LEAKY_BUCKET with the same burst give the same answers on any trace. */
  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3})
  void gcraAndTokenBucketAdmitIdenticalArrivals(long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    Policy base = Policy.of(13, Duration.ofMillis(7_777)).withBurst(6);
    Policy gcra = base.withAlgorithm(Algorithm.GCRA);
    Policy bucket = base.withAlgorithm(Algorithm.TOKEN_BUCKET);
    Policy leaky = base.withAlgorithm(Algorithm.LEAKY_BUCKET);
    int allowed = 0;
    for (int i = 0; i < 1_000; i++) {
      long cost = 1 + random.nextInt(3);
      Decision g = limiter.check(key("g"), gcra, cost);
      Decision b = limiter.check(key("b"), bucket, cost);
      Decision l = limiter.check(key("l"), leaky, cost);
      assertThat(b.allowed()).as("arrival %d", i).isEqualTo(g.allowed());
      assertThat(l.allowed()).as("arrival %d", i).isEqualTo(g.allowed());
      assertThat(b.remaining()).isEqualTo(g.remaining());
      assertThat(b.retryAfter()).isEqualTo(g.retryAfter());
      assertThat(b.resetAfter()).isEqualTo(g.resetAfter());
      allowed += g.allowed() ? 1 : 0;
      advanceMicros(random.nextInt(10) == 0 ? random.nextLong(5_000_000) : random.nextLong(400_000));
    }
    assertThat(allowed).as("the trace mixes allowed and denied").isBetween(200, 900);
  }

  // ---------------------------------------------------------------- algorithm properties

  /** 2 per 10 s at second 8 of a window: 2 pass, the 3rd waits exactly 2 s, then 2 more pass. */
  @Test
  void fixedWindowAllowsTwiceTheLimitAcrossAnEdge() {
    Policy p = policy(Algorithm.FIXED_WINDOW, 2, Duration.ofSeconds(10));
    String k = key("edge");
    advanceMicros(8_000_000);
    assertThat(limiter.check(k, p).allowed()).isTrue();
    assertThat(limiter.check(k, p).allowed()).isTrue();
    Decision third = limiter.check(k, p);
    assertThat(third.allowed()).isFalse();
    assertThat(third.retryAfter()).isEqualTo(Duration.ofSeconds(2));
    assertThat(third.resetAfter()).isEqualTo(Duration.ofSeconds(2));
    advanceMicros(2_000_000);
    assertThat(limiter.check(k, p).allowed()).isTrue();
    assertThat(limiter.check(k, p).allowed()).isTrue();
    assertThat(limiter.check(k, p).allowed()).isFalse();
  }

  /**
   * A late check (its {@code now} read before another thread's, back in the previous window) counts
   * in the key's newest window: a key's time never goes back, so its own window, full, is not
   * reopened, and the newest window's room is what it gets; retryAfter runs from its own now.
   */
  @Test
  void fixedWindowCountsALateCheckInTheKeysNewestWindow() {
    Policy p = policy(Algorithm.FIXED_WINDOW, 2, Duration.ofSeconds(10));
    String k = key("late");
    advanceMicros(5_000_000);
    assertThat(limiter.check(k, p, 2).allowed()).isTrue(); // window [0 s, 10 s) full
    advanceMicros(5_000_000);
    assertThat(limiter.check(k, p).remaining()).isEqualTo(1); // window [10 s, 20 s): 1
    clock.set(START.plusMillis(9_500));
    Decision late = limiter.check(k, p);
    assertThat(late.allowed()).as("counted in [10 s, 20 s), which had room").isTrue();
    assertThat(late.remaining()).isZero();
    assertThat(late.resetAfter()).as("the newest window's end, from its own now").isEqualTo(Duration.ofMillis(10_500));
    Decision again = limiter.check(k, p);
    assertThat(again.allowed()).isFalse();
    assertThat(again.retryAfter()).isEqualTo(Duration.ofMillis(10_500));
    clock.set(START.plusMillis(10_500));
    Decision now = limiter.check(k, p);
    assertThat(now.allowed()).as("the newest window holds the late check").isFalse();
    assertThat(now.retryAfter()).isEqualTo(Duration.ofMillis(9_500));
  }

  /**
   * A late check on a token bucket (its now before the bucket's last refill) waits for the refill
   * that starts at that last moment: its retryAfter counts from its own now.
   */
  @Test
  void tokenBucketRetryAfterOfALateCheckCountsTheLag() {
    Policy p = policy(Algorithm.TOKEN_BUCKET, 1, Duration.ofSeconds(10)); // 10 s: Redis's real-time TTLs outlive the test
    String k = key("tb-late");
    assertThat(limiter.check(k, p).allowed()).isTrue(); // empty at START, full again at START + 10 s
    clock.set(START.minusSeconds(5));
    Decision late = limiter.check(k, p);
    assertThat(late.allowed()).isFalse();
    assertThat(late.retryAfter()).isEqualTo(Duration.ofSeconds(15));
    assertThat(late.resetAfter()).isEqualTo(Duration.ofSeconds(15));
    clock.set(START.plusSeconds(10).minusNanos(1_000));
    assertThat(limiter.check(k, p).allowed()).as("1 µs before").isFalse();
    clock.set(START.plusSeconds(10));
    assertThat(limiter.check(k, p).allowed()).as("at retryAfter").isTrue();
  }

  /**
   * The same for the sliding window counter: a late check counts in the key's newest window, decided
   * at that window's start (the previous window weighs in whole).
   */
  @Test
  void slidingWindowCountsALateCheckInTheKeysNewestWindow() {
    Policy p = policy(Algorithm.SLIDING_WINDOW, 5, Duration.ofSeconds(10));
    String k = key("sw-late");
    assertThat(limiter.check(k, p, 2).allowed()).isTrue(); // window [0 s, 10 s): 2
    advanceMicros(10_000_000);
    assertThat(limiter.check(k, p, 2).allowed()).isTrue(); // 2·(1 − 0) + 2 = 4: window [10 s, 20 s): 2
    clock.set(START.plusMillis(9_500));
    Decision late = limiter.check(k, p);
    assertThat(late.allowed()).as("2·1 + 2 + 1 <= 5 at 10 s").isTrue();
    assertThat(late.remaining()).isZero();
    assertThat(late.resetAfter()).as("the end of the window after, from its own now").isEqualTo(Duration.ofMillis(20_500));
    clock.set(START.plusMillis(10_500));
    Decision now = limiter.check(k, p);
    // previous 2 weighted by 9.5/10, plus 3, plus 1 > 5: denied until 2·(1 − f) <= 1, f = 1/2
    assertThat(now.allowed()).isFalse();
    assertThat(now.retryAfter()).isEqualTo(Duration.ofMillis(4_500));
  }

  /** After 10 requests fill a 10-per-window policy, exactly 5 more pass at the next window's half. */
  @Test
  void slidingWindowCounterWeighsThePreviousWindow() {
    Policy p = policy(Algorithm.SLIDING_WINDOW, 10, Duration.ofSeconds(10));
    String k = key("sw");
    for (int i = 0; i < 10; i++) {
      assertThat(limiter.check(k, p).allowed()).isTrue();
    }
    Decision denied = limiter.check(k, p);
    assertThat(denied.allowed()).isFalse();
    // the estimate 10·(1 − f) + 0 leaves room for one at f = 0.1: 1 s into the next window
    assertThat(denied.retryAfter()).isEqualTo(Duration.ofSeconds(11));
    advanceMicros(15_000_000);
    int passed = 0;
    while (limiter.check(k, p).allowed()) {
      passed++;
    }
    assertThat(passed).isEqualTo(5);
  }

  /** The retryAfter of a sliding window counter is the first moment the estimate fits. */
  @Test
  void slidingWindowRetryAfterWithinTheWindow() {
    Policy p = policy(Algorithm.SLIDING_WINDOW, 4, Duration.ofSeconds(10));
    String k = key("sw-retry");
    limiter.check(k, p, 4);
    advanceMicros(10_000_000); // next window, previous = 4, f = 0
    Decision d = limiter.check(k, p, 2);
    assertThat(d.allowed()).isFalse();
    // 4·(1 − f) + 2 <= 4  ⇔  f >= 0.5
    assertThat(d.retryAfter()).isEqualTo(Duration.ofSeconds(5));
    assertThat(d.remaining()).isZero();
    advanceMicros(2_500_000); // f = 0.25: estimate 3 leaves 1
    assertThat(limiter.inspect(k, p).remaining()).isEqualTo(1);
  }

  /** Costs of hundreds of units (a script may log them in chunks): the log still orders every unit. */
  @Test
  void slidingLogWithLargeCostsWaitsForExactlyTheUnitsThatMustLeave() {
    Policy p = policy(Algorithm.SLIDING_LOG, 1_000, Duration.ofSeconds(10));
    String k = key("sl-large");
    assertThat(limiter.check(k, p, 600).allowed()).isTrue();
    advanceMicros(1_000_000);
    assertThat(limiter.check(k, p, 400).allowed()).isTrue();
    Decision one = limiter.check(k, p, 1);
    assertThat(one.allowed()).isFalse();
    assertThat(one.retryAfter()).as("the 600 of the start leave at 10 s").isEqualTo(Duration.ofSeconds(9));
    Decision many = limiter.check(k, p, 601);
    assertThat(many.retryAfter()).as("and one of the 400 at 11 s").isEqualTo(Duration.ofSeconds(10));
    advanceMicros(9_000_000);
    assertThat(limiter.check(k, p, 601).allowed()).as("600 free at 10 s, not 601").isFalse();
    assertThat(limiter.check(k, p, 600).allowed()).isTrue();
  }

  @Test
  void slidingLogRetryAfterWaitsForTheOldestUnitsToLeave() {
    Policy p = policy(Algorithm.SLIDING_LOG, 3, Duration.ofSeconds(10));
    String k = key("sl");
    limiter.check(k, p);
    advanceMicros(2_000_000);
    limiter.check(k, p);
    advanceMicros(3_000_000);
    limiter.check(k, p);
    Decision one = limiter.check(k, p);
    assertThat(one.retryAfter()).isEqualTo(Duration.ofSeconds(5));
    Decision two = limiter.check(k, p, 2);
    assertThat(two.retryAfter()).isEqualTo(Duration.ofSeconds(7));
    assertThat(two.resetAfter()).isEqualTo(Duration.ofSeconds(10));
    advanceMicros(5_000_000);
    assertThat(limiter.check(k, p).allowed()).isTrue();
  }

  @Test
  void tokenBucketRefillsContinuously() {
    Policy p = policy(Algorithm.TOKEN_BUCKET, 10, Duration.ofSeconds(10)).withBurst(5);
    String k = key("tb");
    assertThat(limiter.check(k, p, 5).allowed()).isTrue();
    Decision d = limiter.check(k, p, 2);
    assertThat(d.allowed()).isFalse();
    assertThat(d.retryAfter()).isEqualTo(Duration.ofSeconds(2));
    assertThat(d.resetAfter()).isEqualTo(Duration.ofSeconds(5));
    advanceMicros(2_500_000);
    Decision ok = limiter.check(k, p, 2);
    assertThat(ok.allowed()).isTrue();
    assertThat(ok.remaining()).isZero();
    assertThat(ok.resetAfter()).isEqualTo(Duration.ofMillis(4_500));
  }

  @Test
  void gcraSpacesArrivalsByTheEmissionInterval() {
    Policy p = policy(Algorithm.GCRA, 3, Duration.ofSeconds(1)); // T = 333,333.33 µs
    String k = key("gcra");
    limiter.check(k, p, 3);
    Decision d = limiter.check(k, p);
    assertThat(d.allowed()).isFalse();
    assertThat(d.retryAfter()).isEqualTo(Duration.ofNanos(333_334_000));
    assertThat(d.resetAfter()).isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void leakyBucketDelaysRoundUpWhenTheIntervalIsNotAWholeMicrosecond() {
    Policy p = policy(Algorithm.LEAKY_BUCKET, 3, Duration.ofSeconds(10)); // T = 3,333,333⅓ µs, burst 3
    String k = key("lb-fraction");
    assertThat(limiter.check(k, p).delay()).isZero();
    assertThat(limiter.check(k, p).delay()).isEqualTo(Duration.ofNanos(3_333_334_000L));
    assertThat(limiter.check(k, p).delay()).isEqualTo(Duration.ofNanos(6_666_667_000L));
    Decision full = limiter.check(k, p);
    assertThat(full.allowed()).isFalse();
    assertThat(full.retryAfter()).isEqualTo(Duration.ofNanos(3_333_334_000L));
    advanceMicros(3_333_333);
    assertThat(limiter.check(k, p).allowed()).as("1 µs before").isFalse();
    advanceMicros(1);
    Decision next = limiter.check(k, p);
    assertThat(next.allowed()).isTrue();
    assertThat(next.delay()).as("three intervals end exactly 10 s after the start: 6,666,666 µs from now")
        .isEqualTo(Duration.ofNanos(6_666_666_000L));
  }

  /** Only the leaky bucket delays: every other algorithm's admitted decision has no delay. */
  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = "LEAKY_BUCKET", mode = EnumSource.Mode.EXCLUDE)
  void otherAlgorithmsNeverDelay(Algorithm algorithm) {
    Policy p = policy(algorithm, 3, Duration.ofSeconds(1));
    String k = key("no-delay");
    for (int i = 0; i < 3; i++) {
      assertThat(limiter.check(k, p).delay()).isZero();
    }
  }

  @Test
  void leakyBucketDelaysAdmittedWorkToAConstantRate() {
    Policy p = policy(Algorithm.LEAKY_BUCKET, 1, Duration.ofSeconds(1)).withBurst(3);
    String k = key("lb");
    assertThat(limiter.check(k, p).delay()).isZero();
    assertThat(limiter.check(k, p).delay()).isEqualTo(Duration.ofSeconds(1));
    Decision third = limiter.check(k, p);
    assertThat(third.allowed()).isTrue();
    assertThat(third.delay()).isEqualTo(Duration.ofSeconds(2));
    assertThat(third.resetAfter()).isEqualTo(Duration.ofSeconds(3));
    Decision full = limiter.check(k, p);
    assertThat(full.allowed()).isFalse();
    assertThat(full.delay()).isZero();
    assertThat(full.retryAfter()).isEqualTo(Duration.ofSeconds(1));
    advanceMicros(1_500_000);
    Decision later = limiter.check(k, p);
    assertThat(later.allowed()).isTrue();
    assertThat(later.delay()).isEqualTo(Duration.ofMillis(1_500));
  }

  // ---------------------------------------------------------------- a store's bound

  /**
   * A flood of one-off keys (an attacker rotating keys) lifts no lockout and resets no count: a
   * backend that bounds its store drops the states nearest to fresh first. 5,000 one-off keys, past
   * the in-memory contract run's bound of 1,000.
   */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void aFloodOfOneOffKeysLiftsNoLockoutAndResetsNoCount(Algorithm algorithm) {
    Policy login = policy(algorithm, 5, Duration.ofMinutes(15)).withName("login");
    Policy counter = policy(algorithm, 500, Duration.ofHours(1)).withName("counter");
    String victim = key("victim");
    String counted = key("counted");
    for (int i = 0; i < 5; i++) {
      assertThat(limiter.check(victim, login).allowed()).isTrue();
    }
    Decision lockedOut = limiter.check(victim, login);
    assertThat(lockedOut.allowed()).isFalse();
    limiter.check(counted, counter);
    limiter.check(counted, counter);
    for (int i = 0; i < 5_000; i++) {
      limiter.check(key("one-off-" + i), i % 2 == 0 ? login : counter);
    }
    Decision after = limiter.check(victim, login);
    assertThat(after.allowed()).as("the lockout outlived the flood").isFalse();
    assertThat(after.retryAfter()).isEqualTo(lockedOut.retryAfter());
    assertThat(limiter.check(counted, counter).remaining()).as("the count outlived the flood").isEqualTo(497);
  }

  // ---------------------------------------------------------------- the clock steps

  /** Steps back, in windows, that the clock-step cases take. */
  private static final double[] STEPS_BACK = {0.5, 1, 2, 3, 100};

  static Stream<Arguments> clockStepsBack() {
    Stream.Builder<Arguments> cases = Stream.builder();
    for (Algorithm algorithm : Algorithm.values()) {
      for (double windows : STEPS_BACK) {
        cases.add(Arguments.of(algorithm, windows, false));
        cases.add(Arguments.of(algorithm, windows, true));
      }
    }
    return cases.build();
  }

  /**
   * The clock steps back (an NTP step, a VM resumed, a clock set by hand) on a fresh key or a key in
   * use: every decision is the in-memory backend's, check for check, and the step creates no
   * capacity. A key's time never goes back: a check stamped before the newest moment its state holds
   * is decided against that state (no window reopens, nothing refills), with retryAfter measured
   * from its own now. A fresh key is limited as ever, though the backend has seen later times.
   */
  @ParameterizedTest(name = "{0}, {1} windows back, key in use: {2}")
  @MethodSource("clockStepsBack")
  void aClockSteppedBackCreatesNoCapacity(Algorithm algorithm, double windowsBack, boolean inUse) {
    Policy p = policy(algorithm, 3, Duration.ofSeconds(10)); // 10 s: Redis's real-time TTLs outlive the test
    String k = key("step-" + algorithm + "-" + windowsBack + "-" + inUse);
    String elsewhere = key("step-elsewhere-" + algorithm + "-" + windowsBack + "-" + inUse);
    try (Twin twin = new Twin()) {
      twin.advanceMicros(4_500_000); // into the window
      twin.check(elsewhere, p, 1); // the backend has seen this time, whichever key
      if (inUse) {
        twin.check(k, p, 1);
        twin.advanceMicros(1_000_000);
        twin.check(k, p, 1);
      }
      long room = twin.inspect(k, p).remaining();
      twin.advanceMicros(-(long) (windowsBack * 10_000_000));
      int admitted = 0;
      for (int i = 0; i < 5; i++) {
        admitted += twin.check(k, p, 1).allowed() ? 1 : 0;
      }
      assertThat(admitted).as("admitted after the step back: no more than the room before it").isLessThanOrEqualTo((int) room);
      if (!inUse) {
        assertThat(admitted).as("a fresh key admits its capacity, no more").isEqualTo(3);
      }
      for (int i = 0; i < 8; i++) { // on through the windows that follow, one check each quarter window
        twin.advanceMicros(2_500_000);
        twin.check(k, p, 1);
      }
    }
  }

  /**
   * The clock steps a day forward: every state is as fresh as after a day, so the key admits its
   * capacity; and back again: what was consumed a day ahead stays consumed until the clock reaches
   * that time again (a key's time never goes back). Decisions are the in-memory backend's throughout.
   */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void aClockSteppedADayForwardAndBack(Algorithm algorithm) {
    Policy p = policy(algorithm, 3, Duration.ofSeconds(10));
    String k = key("day-" + algorithm);
    try (Twin twin = new Twin()) {
      twin.check(k, p, 3);
      assertThat(twin.check(k, p, 1).allowed()).isFalse();
      twin.advanceMicros(86_400_000_000L);
      int admitted = 0;
      for (int i = 0; i < 5; i++) {
        admitted += twin.check(k, p, 1).allowed() ? 1 : 0;
      }
      assertThat(admitted).as("a day later: fresh").isEqualTo(3);
      twin.advanceMicros(-86_400_000_000L + 1_000_000);
      for (int i = 0; i < 3; i++) {
        assertThat(twin.check(k, p, 1).allowed()).as("back a day: the later consumption stands").isFalse();
      }
    }
  }

  /**
   * The limiter under test and an in-memory reference run side by side on clocks set alike: every
   * decision of the backend under test must equal the reference's.
   */
  private final class Twin implements AutoCloseable {
    private final ManualClock referenceClock = ManualClock.at(clock.instant());
    private final RateLimiter reference = RateLimiter.builder().clock(referenceClock)
        .backend(InMemoryBackend.create()).nearCache(false).build();

    void advanceMicros(long micros) {
      clock.advanceMicros(micros);
      referenceClock.advanceMicros(micros);
    }

    Decision check(String k, Policy p, long cost) {
      Decision expected = reference.check(k, p, cost);
      Decision actual = limiter.check(k, p, cost);
      assertThat(actual).as("check of %s at %s", k, clock.instant()).isEqualTo(expected);
      return actual;
    }

    Decision inspect(String k, Policy p) {
      Decision expected = reference.inspect(k, p);
      Decision actual = limiter.inspect(k, p);
      assertThat(actual).as("inspect of %s at %s", k, clock.instant()).isEqualTo(expected);
      return actual;
    }

    @Override
    public void close() {
      reference.close();
    }
  }
}

package dev.ratelimit.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Part of {@link RateLimiterContract}: What is allowed and denied, what remains, and when a denied check may pass again. */
abstract class AdmissionContract extends ContractSupport {
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
}

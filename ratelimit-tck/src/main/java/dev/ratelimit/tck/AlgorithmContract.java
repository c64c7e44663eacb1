package dev.ratelimit.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Part of {@link RateLimiterContract}: Each algorithm's own arithmetic, to the microsecond. */
abstract class AlgorithmContract extends LongRunContract {
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
}

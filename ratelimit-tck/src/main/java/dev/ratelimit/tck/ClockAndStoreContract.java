package dev.ratelimit.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.memory.InMemoryBackend;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Part of {@link RateLimiterContract}: A store's bound, and a clock stepped back or forward. */
abstract class ClockAndStoreContract extends AlgorithmContract {
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

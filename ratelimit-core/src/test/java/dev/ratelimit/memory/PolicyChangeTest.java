package dev.ratelimit.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * A named policy's numbers can change at run time (same name, new limit): the next check uses the
 * new numbers on the state the key already has, nothing is wiped. State identity is the name and
 * the algorithm. The Redis twin of this test is {@code RedisPolicyChangeTest}, with the same numbers.
 */
class PolicyChangeTest {
  private final ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L)); // 20 s into a minute

  @Test
  void aFixedWindowKeepsItsCountUnderANewLimit() {
    Policy v1 = Policy.of(5, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW).withName("api");
    Policy v2 = Policy.of(10, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW).withName("api");
    Policy v3 = Policy.of(3, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW).withName("api");
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).build()) {
      assertThat(limiter.check("k", v1, 3).remaining()).isEqualTo(2);
      Decision raised = limiter.check("k", v2);
      assertThat(raised.allowed()).isTrue();
      assertThat(raised.remaining()).as("10 - (3 + 1): the count was kept").isEqualTo(6);
      Decision lowered = limiter.check("k", v3);
      assertThat(lowered.allowed()).as("4 already counted against a limit of 3").isFalse();
      assertThat(lowered.remaining()).isZero();
      assertThat(lowered.retryAfter()).as("until the window ends").isEqualTo(Duration.ofSeconds(40));
      assertThat(limiter.check("k", v2).remaining()).as("back to 10: still the same count").isEqualTo(5);
    }
  }

  /**
   * A window that changes length under its name where both lengths start a window at the same
   * moment: the count is kept and the key is held for the new window (with assertions on, a held
   * expiry for the old length fails the entry's check).
   */
  @Test
  void aFixedWindowOfANewLengthStartingTogetherKeepsItsCountAndItsKey() {
    Policy v1 = Policy.of(5, Duration.ofSeconds(10), Algorithm.FIXED_WINDOW).withName("api");
    Policy v2 = Policy.of(5, Duration.ofSeconds(20), Algorithm.FIXED_WINDOW).withName("api");
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).build()) { // 1,700,000,000 s: both start here
      assertThat(limiter.check("k", v1).remaining()).isEqualTo(4);
      Decision longer = limiter.check("k", v2);
      assertThat(longer.remaining()).as("the count was kept").isEqualTo(3);
      assertThat(longer.resetAfter()).isEqualTo(Duration.ofSeconds(20));
      clock.advance(Duration.ofSeconds(15));
      assertThat(limiter.check("k", v2).remaining()).as("still the 20 s window, 15 s in").isEqualTo(2);
    }
  }

  @Test
  void gcraKeepsItsTheoreticalArrivalTimeUnderANewRate() {
    Policy v1 = Policy.of(10, Duration.ofMinutes(1)).withName("api"); // T = 6 s
    Policy v2 = Policy.of(20, Duration.ofMinutes(1)).withName("api"); // T = 3 s, burst 20
    Policy v3 = Policy.of(2, Duration.ofMinutes(1)).withName("api");  // T = 30 s, burst 2
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).build()) {
      assertThat(limiter.check("k", v1, 5).remaining()).isEqualTo(5); // tat = t + 30 s
      Decision raised = limiter.check("k", v2);
      assertThat(raised.allowed()).isTrue();
      assertThat(raised.remaining()).as("30 s of debt is 10 units at the new rate, + 1").isEqualTo(9);
      assertThat(raised.resetAfter()).isEqualTo(Duration.ofSeconds(33));
      Decision lowered = limiter.check("k", v3);
      assertThat(lowered.allowed()).as("33 s of debt exceeds a 60 s burst only after this one: "
          + "33 + 30 - 60 > 0").isFalse();
      assertThat(lowered.retryAfter()).isEqualTo(Duration.ofSeconds(3));
      clock.advance(Duration.ofSeconds(3));
      assertThat(limiter.check("k", v3).allowed()).isTrue();
    }
  }
}

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
 * the algorithm. The contract suite checks this for every backend
 * ({@code RateLimiterContract.aFixedWindowKeepsItsCountUnderANewLimit} and its GCRA twin); what is
 * here is the in-memory backend's own: a window's new length and the key's expiry.
 */
class PolicyChangeTest {
  private final ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L)); // 20 s into a minute

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
}

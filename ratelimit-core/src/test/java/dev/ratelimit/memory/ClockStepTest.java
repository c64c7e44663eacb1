package dev.ratelimit.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/**
 * The clock stepped back (an NTP step, a VM resumed): the in-memory backend's own side of the
 * contract suite's clock-step cases. A new key's expiry was computed from a {@code now} already
 * behind the newest time the cache had seen, so it counted as expired at once and the key was
 * never limited; and a fixed window reopened an old window.
 */
class ClockStepTest {
  private static final Instant T = Instant.ofEpochSecond(1_700_000_000L);

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void aNewKeyIsLimitedAfterTheClockWentBackTwoWindows(Algorithm algorithm) {
    ManualClock clock = ManualClock.at(T);
    Policy p = Policy.of(1, Duration.ofMinutes(1), algorithm);
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).build()) {
      limiter.check("a", p);
      clock.set(T.minusSeconds(121));
      int allowed = 0;
      for (int i = 0; i < 5; i++) {
        allowed += limiter.check("b", p).allowed() ? 1 : 0;
      }
      assertThat(allowed).isEqualTo(1);
    }
  }

  @Test
  void aFixedWindowSteppedBackCountsInTheKeysNewestWindow() {
    ManualClock clock = ManualClock.at(T); // aligned to 10 s windows
    Policy p = Policy.of(3, Duration.ofSeconds(10), Algorithm.FIXED_WINDOW);
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).build()) {
      assertThat(limiter.check("k", p, 3).allowed()).isTrue();
      clock.set(T.plusSeconds(31));
      assertThat(limiter.check("k", p).remaining()).isEqualTo(2); // window [30 s, 40 s): 1
      clock.set(T.plusSeconds(11));
      int allowed = 0;
      for (int i = 0; i < 5; i++) {
        allowed += limiter.check("k", p).allowed() ? 1 : 0;
      }
      assertThat(allowed).as("the room [30 s, 40 s) had, no window reopened").isEqualTo(2);
      Decision denied = limiter.check("k", p);
      assertThat(denied.retryAfter()).as("until 40 s, from 11 s").isEqualTo(Duration.ofSeconds(29));
    }
  }
}

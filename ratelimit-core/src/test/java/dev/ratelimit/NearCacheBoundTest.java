package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The near-cache's bound: held entries stay within it, and the verdicts do not depend on it. */
class NearCacheBoundTest {
  static final Policy ONE_PER_MINUTE = Policy.parse("1/1m");

  @Test
  void holdsAtMostItsBoundAndEveryDenialStaysADenial() {
    ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).nearCache(true).nearCacheMaximumEntries(3).build()) {
      for (int i = 0; i < 50; i++) {
        assertThat(limiter.check("k" + i, ONE_PER_MINUTE).allowed()).isTrue();
        assertThat(limiter.check("k" + i, ONE_PER_MINUTE).allowed()).isFalse();
      }
      assertThat(limiter.nearCacheSize()).isBetween(1L, 3L);
      for (int i = 0; i < 50; i++) {
        assertThat(limiter.check("k" + i, ONE_PER_MINUTE).allowed()).as("key %d, cached or not", i).isFalse();
      }
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void theDefaultIsTenThousandAndBelowOneIsRefused() {
    assertThat(RateLimiter.Builder.DEFAULT_NEAR_CACHE_MAXIMUM_ENTRIES).isEqualTo(10_000);
    assertThatThrownBy(() -> RateLimiter.builder().nearCacheMaximumEntries(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nearCacheMaximumEntries must be at least 1").hasMessageContaining("was 0");
  }
}

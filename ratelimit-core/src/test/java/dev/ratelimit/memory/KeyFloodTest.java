package dev.ratelimit.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import java.time.Duration;
import java.time.Instant;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A flood of one-off keys (an attacker rotating keys, a scan) must neither grow the in-memory
 * backend past its bound nor evict the state of a hot key that is over its limit: evicting it
 * would hand that key a fresh quota. Caffeine's W-TinyLFU admission is what protects it.
 */
class KeyFloodTest {
  private static final int MAXIMUM_KEYS = 10_000;
  private static final int ONE_OFF_KEYS = 1_000_000;
  private static final long HOT_LIMIT = 50;

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"GCRA", "FIXED_WINDOW"})
  void aMillionOneOffKeysNeitherGrowTheBackendNorFreeAHotKey(Algorithm algorithm) {
    ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
    InMemoryBackend backend = InMemoryBackend.builder().maximumKeys(MAXIMUM_KEYS).build();
    Policy policy = Policy.of(HOT_LIMIT, Duration.ofHours(1), algorithm).withName("api");
    SplittableRandom random = new SplittableRandom(42);
    long hotChecks = 0;
    long hotAllowed = 0;
    long oneOffAllowed = 0;
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(backend).build()) {
      for (int i = 0; i < ONE_OFF_KEYS; i++) {
        if (i % 10 == 0) {
          hotChecks++;
          Decision hot = limiter.check("hot", policy);
          hotAllowed += hot.allowed() ? 1 : 0;
        }
        oneOffAllowed += limiter.check("one-off-" + random.nextLong(), policy).allowed() ? 1 : 0;
        clock.advanceMicros(1); // a second in all: every state still matters at the end
      }
      assertThat(oneOffAllowed).as("every one-off key was new, so allowed").isEqualTo(ONE_OFF_KEYS);
      assertThat(backend.size()).as("the bound holds").isLessThanOrEqualTo(MAXIMUM_KEYS);
      assertThat(hotChecks).isEqualTo(ONE_OFF_KEYS / 10);
      assertThat(hotAllowed)
          .as("the hot key's state survived the flood: it was never handed a fresh quota")
          .isEqualTo(HOT_LIMIT);
      Decision last = limiter.check("hot", policy);
      assertThat(last.allowed()).as("the hot key is still denied").isFalse();
      assertThat(last.remaining()).isZero();
    }
  }
}

package dev.ratelimit.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Decision;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.spi.Keys;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.openjdk.jol.info.GraphLayout;

/**
 * Memory per key must not grow with the key's length: one 16,000-character key retained about 18 KB,
 * and 15,000 of them ran a 256 MB service out of memory. A key over 128 characters is kept in a
 * bounded form (its first 64 characters and its SHA-256).
 */
class LongKeyMemoryTest {
  static {
    System.setProperty("jol.magicFieldOffset", "true"); // field offsets without an agent on JDK 17
  }

  private static final int KEYS = 1_000;
  private static final int LENGTH = 16_000;

  @Test
  void aSixteenThousandCharacterKeyRetainsWhatAShortOneDoes() {
    InMemoryBackend backend = InMemoryBackend.create();
    Policy p = Policy.of(5, Duration.ofMinutes(15));
    long before = GraphLayout.parseInstance(backend).totalSize();
    try (RateLimiter limiter = RateLimiter.builder().clock(ManualClock.at(Instant.ofEpochSecond(1_700_000_000L)))
        .backend(backend).build()) {
      for (int i = 0; i < KEYS; i++) {
        limiter.check(longKey(i), p);
      }
      long perKey = (GraphLayout.parseInstance(backend).totalSize() - before) / KEYS;
      System.out.printf("LongKeyMemoryTest: %,d bytes retained per %,d-character key%n", perKey, LENGTH);
      assertThat(perKey).as("bytes retained per key").isLessThan(1_500);
      Decision again = limiter.check(longKey(7), p);
      assertThat(again.remaining()).as("the same long key finds its state").isEqualTo(3);
      assertThat(limiter.check(longKey(7) + "x", p).remaining()).as("a longer key is another key").isEqualTo(4);
    }
  }

  @Test
  void theBoundedFormIsInjective() {
    String a = "k".repeat(200);
    String b = "k".repeat(199) + "j";
    assertThat(Keys.bounded("short")).isEqualTo("short");
    assertThat(Keys.bounded(a)).hasSize(Keys.HASHED_LENGTH).isNotEqualTo(Keys.bounded(b));
    assertThat(Keys.HASHED_LENGTH).as("no key kept as it is has a hashed form's length").isGreaterThan(Keys.MAX_KEPT);
    String loneHigh = "k".repeat(200) + "\uD800";
    String loneLow = "k".repeat(200) + "\uDC00";
    assertThat(Keys.bounded(loneHigh)).as("lone surrogates hash apart").isNotEqualTo(Keys.bounded(loneLow));
  }

  private static String longKey(int i) {
    StringBuilder key = new StringBuilder(LENGTH).append(i).append(':');
    while (key.length() < LENGTH) {
      key.append('x');
    }
    return key.toString();
  }
}

package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class ManualClockTest {
  @Test
  void movesOnlyWhenTold() {
    ManualClock clock = ManualClock.at(Instant.ofEpochSecond(100));
    assertThat(clock.instant()).isEqualTo(Instant.ofEpochSecond(100));
    clock.advance(Duration.ofMillis(1_500));
    clock.advanceMicros(7);
    assertThat(clock.instant()).isEqualTo(Instant.ofEpochSecond(101, 500_007_000));
    clock.set(Instant.ofEpochSecond(5));
    assertThat(clock.millis()).isEqualTo(5_000);
    assertThat(ManualClock.atEpochMicros(1_000_001).instant()).isEqualTo(Instant.ofEpochSecond(1, 1_000));
  }

  @Test
  void readsMicrosAndAdvancesWithoutLosingConcurrentSteps() throws Exception {
    ManualClock clock = ManualClock.atEpochMicros(1_700_000_000_000_000L);
    Thread[] threads = new Thread[4];
    for (int t = 0; t < threads.length; t++) {
      threads[t] = new Thread(() -> {
        for (int i = 0; i < 10_000; i++) {
          clock.advanceMicros(1);
        }
      });
      threads[t].start();
    }
    for (Thread t : threads) {
      t.join();
    }
    assertThat(clock.epochMicros()).isEqualTo(1_700_000_000_040_000L);
    assertThat(clock.instant()).isEqualTo(Instant.ofEpochSecond(1_700_000_000L, 40_000_000));
    clock.set(Instant.ofEpochSecond(-1, 999_999_999));
    assertThat(clock.epochMicros()).as("floored").isEqualTo(-1);
  }

  @Test
  void refusesInstantsBeyondItsRange() {
    assertThatThrownBy(() -> ManualClock.at(Instant.ofEpochSecond(10_000_000_000L)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1677 to 2262");
  }

  @Test
  void refusesStepsThatLeaveItsRangeAndStaysWhereItWas() {
    ManualClock clock = ManualClock.atEpochMicros(1_700_000_000_000_000L);
    assertThatThrownBy(() -> clock.advance(java.time.Duration.ofDays(365L * 300)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1677 to 2262");
    assertThatThrownBy(() -> clock.advanceMicros(Long.MAX_VALUE / 2))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1677 to 2262");
    assertThatThrownBy(() -> ManualClock.atEpochMicros(Long.MAX_VALUE))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("epochMicros");
    assertThat(clock.epochMicros()).isEqualTo(1_700_000_000_000_000L);
  }
}

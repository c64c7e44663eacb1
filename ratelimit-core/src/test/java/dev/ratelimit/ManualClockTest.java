package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

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
}

package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class PolicyTest {

  @Test
  void defaultsAreGcraWithBurstEqualToLimitAndADerivedName() {
    Policy p = Policy.of(100, Duration.ofMinutes(1));
    assertThat(p.algorithm()).isEqualTo(Algorithm.GCRA);
    assertThat(p.burst()).isEqualTo(100);
    assertThat(p.name()).isEqualTo("100-per-PT1M-gcra");
    assertThat(p.capacity()).isEqualTo(100);
    assertThat(p.windowMicros()).isEqualTo(60_000_000L);
  }

  @Test
  void derivedNamesFollowChangesAndExplicitNamesStay() {
    Policy p = Policy.of(100, Duration.ofMinutes(1)).withAlgorithm(Algorithm.TOKEN_BUCKET).withBurst(20);
    assertThat(p.name()).isEqualTo("100-per-PT1M-token_bucket-burst-20");
    assertThat(p.capacity()).isEqualTo(20);
    Policy named = p.withName("api");
    assertThat(named.withAlgorithm(Algorithm.FIXED_WINDOW).name()).isEqualTo("api");
    assertThat(named.withAlgorithm(Algorithm.FIXED_WINDOW).capacity()).isEqualTo(100);
    assertThat(named.withLimit(50).limit()).isEqualTo(50);
    assertThat(Policy.of(10, Duration.ofSeconds(1)).withLimit(20).burst()).as("burst follows limit").isEqualTo(20);
  }

  @ParameterizedTest
  @CsvSource({
      "100/1m, 100, PT1M", "5/5m, 5, PT5M", "10/s, 10, PT1S", "7/250ms, 7, PT0.25S",
      "1000/1h, 1000, PT1H", "3/2d, 3, PT48H", "' 42 / 3 s ', 42, PT3S"})
  void parsesSpecs(String spec, long limit, Duration window) {
    Policy p = Policy.parse(spec);
    assertThat(p.limit()).isEqualTo(limit);
    assertThat(p.window()).isEqualTo(window);
    assertThat(p).isEqualTo(Policy.of(limit, window));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "100", "100/", "/1m", "100/1x", "100/1 m s", "-1/1m", "1.5/1m", "100/0m", "a/1m"})
  void refusesBadSpecsNamingThem(String spec) {
    assertThatThrownBy(() -> Policy.parse(spec))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'" + spec + "'");
  }

  @ParameterizedTest
  @CsvSource({"1m, PT1M", "500ms, PT0.5S", "2h, PT2H", "1d, PT24H", "' 10 s', PT10S"})
  void parsesWindows(String text, Duration window) {
    assertThat(Policy.parseWindow(text)).isEqualTo(window);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "m", "1", "1 minute", "-1s", "0s"})
  void refusesBadWindowsNamingThem(String text) {
    assertThatThrownBy(() -> Policy.parseWindow(text)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'" + text + "'");
  }

  @Test
  void refusesANullSpec() {
    assertThatThrownBy(() -> Policy.parse(null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'null'");
  }

  @Test
  void refusesBadNumbersNamingTheValue() {
    assertThatThrownBy(() -> Policy.of(0, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("limit must be at least 1, was 0");
    assertThatThrownBy(() -> Policy.of(1, Duration.ofNanos(999_999)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("window must be at least 1 ms");
    assertThatThrownBy(() -> Policy.of(1, Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("window");
    assertThatThrownBy(() -> Policy.of(1, Duration.ofNanos(1_000_500)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("whole number of microseconds");
    assertThatThrownBy(() -> Policy.of(5, Duration.ofSeconds(1)).withBurst(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("burst must be at least 1, was 0");
    assertThatThrownBy(() -> Policy.of(5, Duration.ofSeconds(1)).withName(" "))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
    assertThatThrownBy(() -> Policy.of(5, Duration.ofSeconds(1)).withName(null))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("name");
  }

  @Test
  void refusesCapacityTimesWindowBeyondExactArithmetic() {
    assertThatThrownBy(() -> Policy.of(1_000_000, Duration.ofDays(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1000000 × 86400000000 µs exceeds 2^52");
    Policy daily = Policy.of(1_000_000, Duration.ofDays(1), Algorithm.FIXED_WINDOW);
    assertThat(daily.name()).isEqualTo("1000000-per-PT24H-fixed_window");
    assertThatThrownBy(() -> daily.withAlgorithm(Algorithm.SLIDING_WINDOW))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("limit × window");
  }

  /** Lua's numbers are doubles: a fixed window's count and a window in µs stay below 2^52 too. */
  @Test
  void refusesAFixedWindowLimitOrAWindowBeyondExactArithmetic() {
    long max = Policy.MAX_CAPACITY_TIMES_WINDOW_MICROS;
    assertThat(Policy.of(max, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW).limit()).isEqualTo(max);
    assertThatThrownBy(() -> Policy.of(max + 1, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("limit must be at most 4503599627370496, was 4503599627370497");
    Duration tooLong = Duration.ofNanos((max + 1) * 1_000);
    assertThatThrownBy(() -> Policy.of(1, tooLong, Algorithm.SLIDING_LOG))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2^52 µs (about 142 years)");
    assertThatThrownBy(() -> Policy.of(1, tooLong, Algorithm.FIXED_WINDOW))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2^52 µs");
    assertThat(Policy.of(1, Duration.ofDays(36_500), Algorithm.FIXED_WINDOW).window()).isEqualTo(Duration.ofDays(36_500));
  }

  @Test
  void refusesASlidingLogLimitBeyondWhatItCanLog() {
    assertThatThrownBy(() -> Policy.of(Policy.MAX_SLIDING_LOG_LIMIT + 1, Duration.ofHours(1), Algorithm.SLIDING_LOG))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("limit must be at most 1073741824, was 1073741825")
        .hasMessageContaining("SLIDING_WINDOW");
    assertThat(Policy.of(Policy.MAX_SLIDING_LOG_LIMIT, Duration.ofHours(1), Algorithm.SLIDING_LOG).limit())
        .isEqualTo(1L << 30);
  }
}

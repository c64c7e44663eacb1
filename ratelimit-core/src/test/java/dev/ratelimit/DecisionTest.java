package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Decision holds microseconds and builds its Durations when asked; it stays a value. */
class DecisionTest {
  private final Policy p = Policy.of(5, Duration.ofMinutes(1)).withName("api");

  @Test
  void microsecondsAndDurationsAgree() {
    Decision d = Decision.denied(p, 0, 1_500_001, 2_000_000);
    assertThat(d.retryAfterMicros()).isEqualTo(1_500_001);
    assertThat(d.retryAfter()).isEqualTo(Duration.ofNanos(1_500_001_000L));
    assertThat(d.resetAfterMicros()).isEqualTo(2_000_000);
    assertThat(d.resetAfter()).isEqualTo(Duration.ofSeconds(2));
    assertThat(d.delayMicros()).isZero();
    assertThat(d.delay()).isZero();
    Decision leaky = Decision.allowed(p, 3, 4_000_000, 250_000);
    assertThat(leaky.retryAfterMicros()).isZero();
    assertThat(leaky.delay()).isEqualTo(Duration.ofMillis(250));
  }

  @Test
  void aDurationWithAFractionOfAMicrosecondIsRoundedUpAndANegativeOneIsZero() {
    Decision d = new Decision(p, false, 0, Duration.ofNanos(1), Duration.ofNanos(1_999), Duration.ofSeconds(-1));
    assertThat(d.retryAfterMicros()).as("a wait is never shortened").isEqualTo(1);
    assertThat(d.resetAfterMicros()).isEqualTo(2);
    assertThat(d.delayMicros()).isZero();
    assertThat(new Decision(p, false, 0, Duration.ofSeconds(Long.MAX_VALUE), Duration.ZERO, Duration.ZERO)
        .retryAfterMicros()).as("saturated").isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void aValue() {
    Decision a = Decision.denied(p, 1, 10, 20);
    Decision b = new Decision(p, false, 1, Duration.ofNanos(10_000), Duration.ofNanos(20_000), Duration.ZERO);
    assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
    assertThat(a).isNotEqualTo(Decision.denied(p, 1, 11, 20));
    assertThat(a).isNotEqualTo(Decision.denied(p.withName("other"), 1, 10, 20));
    assertThat(a.toString()).isEqualTo("Decision[policy=" + p + ", allowed=false, remaining=1, retryAfter=PT0.00001S,"
        + " resetAfter=PT0.00002S, delay=PT0S]");
  }
}

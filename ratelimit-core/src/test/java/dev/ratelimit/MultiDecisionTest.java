package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class MultiDecisionTest {
  private final Policy a = Policy.of(10, Duration.ofSeconds(1)).withName("a");
  private final Policy b = Policy.of(10, Duration.ofSeconds(1)).withName("b");
  private final Policy c = Policy.of(10, Duration.ofSeconds(1)).withName("c");

  @Test
  void limitingIsTheDenialWithTheLongestRetryAfter() {
    MultiDecision m = new MultiDecision(false, List.of(
        Decision.denied(a, 0, 2_000, 5_000), Decision.allowed(b, 9, 100, 0), Decision.denied(c, 1, 7_000, 7_000)));
    assertThat(m.limiting().policy()).isEqualTo(c);
  }

  @Test
  void limitingWhenAllowedIsTheLeastRemaining() {
    MultiDecision m = new MultiDecision(true, List.of(
        Decision.allowed(a, 4, 1, 0), Decision.allowed(b, 2, 1, 0), Decision.allowed(c, 3, 1, 0)));
    assertThat(m.limiting().policy()).isEqualTo(b);
  }

  @Test
  void atEqualRetryAfterTheDenialWithLessRemainingLimits() {
    MultiDecision m = new MultiDecision(false, List.of(
        Decision.denied(a, 3, 2_000, 2_000), Decision.denied(b, 1, 2_000, 2_000), Decision.denied(c, 2, 2_000, 2_000)));
    assertThat(m.limiting().policy()).isEqualTo(b);
  }

  @Test
  void amongEqualDecisionsTheFirstLimits() {
    MultiDecision denied = new MultiDecision(false, List.of(
        Decision.denied(a, 0, 2_000, 2_000), Decision.denied(b, 0, 2_000, 2_000)));
    MultiDecision allowed = new MultiDecision(true, List.of(
        Decision.allowed(a, 4, 1, 0), Decision.allowed(b, 4, 1, 0)));
    assertThat(denied.limiting().policy()).isEqualTo(a);
    assertThat(allowed.limiting().policy()).isEqualTo(a);
  }

  @Test
  void deniedWithNoPolicyDenyingAloneIsTheLeastRemaining() {
    // a check refused as a whole (a failure mode, a cross-slot refusal) though no policy denied
    MultiDecision m = new MultiDecision(false, List.of(
        Decision.allowed(a, 4, 1_000, 0), Decision.allowed(b, 1, 9_000, 0), Decision.allowed(c, 2, 3_000, 0)));
    assertThat(m.limiting().policy()).isEqualTo(b);
  }

  @Test
  void decisionsCarryExactMicroseconds() {
    Decision d = Decision.denied(a, 0, 1_234_567, 2_000_001);
    assertThat(d.retryAfter()).isEqualTo(Duration.ofNanos(1_234_567_000));
    assertThat(d.resetAfter()).isEqualTo(Duration.ofNanos(2_000_001_000));
    assertThat(d.limit()).isEqualTo(10);
    assertThat(d.isDegraded()).isFalse();
  }
}

package dev.ratelimit.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Part of {@link RateLimiterContract}: What consumes nothing (denials, inspect, peekAll, a refused call), reset, and what bad input is refused. */
abstract class ConsumptionContract extends AdmissionContract {
  // ---------------------------------------------------------------- nothing consumed

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void deniedChecksConsumeNothing(Algorithm algorithm) {
    Policy p = policy(algorithm, 4, Duration.ofSeconds(8));
    String k = key("denied");
    limiter.check(k, p, 3);
    Decision first = limiter.check(k, p, 2);
    assertThat(first.allowed()).isFalse();
    for (int i = 0; i < 60; i++) {
      long cost = 2 + i % 3;
      assertThat(limiter.check(k, p, cost).allowed()).as("cost %d", cost).isFalse();
    }
    Decision last = limiter.check(k, p, 2);
    assertThat(last).isEqualTo(first);
    advanceMicros(micros(first.retryAfter()));
    assertThat(limiter.check(k, p, 2).allowed()).isTrue();
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void inspectConsumesNothing(Algorithm algorithm) {
    Policy p = policy(algorithm, 3, Duration.ofSeconds(5));
    String k = key("inspect");
    Decision fresh = limiter.inspect(k, p);
    assertThat(fresh.allowed()).isTrue();
    assertThat(fresh.remaining()).isEqualTo(3);
    for (int i = 0; i < 20; i++) {
      limiter.inspect(k, p);
    }
    limiter.check(k, p, 2);
    Decision afterTwo = limiter.inspect(k, p);
    assertThat(afterTwo.remaining()).isEqualTo(1);
    assertThat(afterTwo.allowed()).isTrue();
    assertThat(limiter.inspect(k, p)).isEqualTo(afterTwo);
    assertThat(limiter.check(k, p, 1).allowed()).isTrue();
    Decision exhausted = limiter.inspect(k, p);
    assertThat(exhausted.allowed()).isFalse();
    assertThat(exhausted.remaining()).isZero();
    assertThat(exhausted.retryAfter()).isEqualTo(limiter.check(k, p).retryAfter());
  }

  /**
   * peekAll answers as checkAll of the same cost would, to the microsecond, and consumes nothing:
   * allowed exactly while the room covers the cost, {@code remaining} the room now, a denial's
   * {@code retryAfter} the exact wait for that cost (not for one unit).
   */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void peekAllAnswersAsCheckAllAndConsumesNothing(Algorithm algorithm) {
    Policy small = policy(algorithm, 5, Duration.ofSeconds(10)).withName("small");
    Policy roomy = policy(algorithm, 50, Duration.ofSeconds(10)).withName("roomy");
    List<Policy> both = List.of(small, roomy);
    String k = key("peek");
    MultiDecision fresh = limiter.peekAll(k, both, 2);
    assertThat(fresh.allowed()).isTrue();
    assertThat(fresh.decisions()).extracting(Decision::remaining).containsExactly(5L, 50L);
    for (int i = 0; i < 10; i++) {
      assertThat(limiter.peekAll(k, both, 2)).isEqualTo(fresh);
    }
    assertThat(limiter.checkAll(k, both, 2).allowed()).isTrue();
    assertThat(limiter.checkAll(k, both, 2).allowed()).isTrue();
    MultiDecision oneLeft = limiter.peekAll(k, both, 2);
    assertThat(oneLeft.allowed()).as("1 left of small, cost 2").isFalse();
    assertThat(oneLeft.decisions()).extracting(Decision::remaining).containsExactly(1L, 46L);
    assertThat(limiter.peekAll(k, both, 1).allowed()).as("cost 1 fits").isTrue();
    assertThat(limiter.inspect(k, small).remaining()).as("peeks consumed nothing").isEqualTo(1);
    MultiDecision checked = limiter.checkAll(k, both, 2);
    assertThat(checked.allowed()).isFalse();
    assertThat(oneLeft.limiting().retryAfter()).as("the wait for cost 2").isEqualTo(checked.limiting().retryAfter())
        .isPositive();
    advanceMicros(micros(oneLeft.limiting().retryAfter()) - 1);
    assertThat(limiter.peekAll(k, both, 2).allowed()).as("1 µs before retryAfter").isFalse();
    advanceMicros(1);
    assertThat(limiter.peekAll(k, both, 2).allowed()).as("at retryAfter").isTrue();
    assertThat(limiter.checkAll(k, both, 2).allowed()).isTrue();
  }

  /** A reset forgets the previous window of a sliding window counter too, and nothing of other policies or keys. */
  @Test
  void resetForgetsEveryWindowOfItsPolicyAndNothingElse() {
    Policy sw = policy(Algorithm.SLIDING_WINDOW, 4, Duration.ofSeconds(10)).withName("sw");
    Policy other = policy(Algorithm.FIXED_WINDOW, 4, Duration.ofSeconds(10)).withName("other");
    String k = key("reset-sw");
    String neighbour = key("reset-sw-neighbour");
    limiter.check(k, sw, 4);
    limiter.check(k, other, 3);
    limiter.check(neighbour, sw, 2);
    advanceMicros(10_000_000); // the 4 now weigh from the previous window
    assertThat(limiter.inspect(k, sw).remaining()).isZero();
    limiter.reset(k, sw);
    assertThat(limiter.inspect(k, sw).remaining()).as("the previous window forgotten too").isEqualTo(4);
    clock.set(START); // back in the window where the other policy counted 3
    assertThat(limiter.inspect(k, other).remaining()).as("another policy of the key").isEqualTo(1);
    assertThat(limiter.inspect(neighbour, sw).remaining()).as("another key").isEqualTo(2);
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void resetForgetsTheKey(Algorithm algorithm) {
    Policy p = policy(algorithm, 3, Duration.ofMinutes(1));
    String k = key("reset");
    limiter.check(k, p, 3);
    assertThat(limiter.check(k, p).allowed()).isFalse();
    limiter.reset(k, p);
    assertThat(limiter.inspect(k, p).remaining()).isEqualTo(3);
    assertThat(limiter.check(k, p, 3).allowed()).isTrue();
  }

  /** tryAcquire answers as check's allowed() and consumes the same. */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void tryAcquireAnswersAndConsumesAsCheck(Algorithm algorithm) {
    Policy p = policy(algorithm, 3, Duration.ofMinutes(1));
    String k = key("try-acquire");
    assertThat(limiter.tryAcquire(k, p, 2)).isTrue();
    assertThat(limiter.inspect(k, p).remaining()).isEqualTo(1);
    assertThat(limiter.tryAcquire(k, p, 2)).as("2 of the 1 left").isFalse();
    assertThat(limiter.inspect(k, p).remaining()).as("a refused call consumes nothing").isEqualTo(1);
    assertThat(limiter.tryAcquire(k, p)).isTrue();
    assertThat(limiter.tryAcquire(k, p)).isFalse();
    assertThat(limiter.check(k, p).allowed()).isFalse();
  }

  // ---------------------------------------------------------------- validation

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void badInputIsRefusedBeforeAnythingIsConsumed(Algorithm algorithm) {
    Policy p = policy(algorithm, 5, Duration.ofSeconds(10)).withBurst(4);
    String k = key("bad");
    long capacity = p.capacity();
    assertThatThrownBy(() -> limiter.check(k, p, capacity + 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("cost " + (capacity + 1))
        .hasMessageContaining("capacity " + capacity);
    assertThatThrownBy(() -> limiter.check(k, p, 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cost");
    assertThatThrownBy(() -> limiter.check(k, p, -3))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-3");
    assertThatThrownBy(() -> limiter.check("", p))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key");
    assertThatThrownBy(() -> limiter.check(null, p))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key");
    assertThatThrownBy(() -> limiter.check(k, null))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("policy");
    assertThatThrownBy(() -> limiter.checkAll(k, List.of(p, Policy.of(1, Duration.ofSeconds(1))), 2))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cost 2");
    assertThatThrownBy(() -> limiter.checkAsync(k, p, capacity + 1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(limiter.check(k, p, capacity).allowed()).as("nothing was consumed").isTrue();
  }
}

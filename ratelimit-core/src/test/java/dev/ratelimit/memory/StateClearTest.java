package dev.ratelimit.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A reset of a key's first policy clears its state in place ({@link State#clear()}): from then on
 * it must answer exactly as a fresh state, whatever it held. Random histories, then the same random
 * checks on the cleared state and on a fresh one.
 */
class StateClearTest {
  private static final long START = 1_700_000_000_000_000L;

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void aClearedStateAnswersAsAFreshOne(Algorithm algorithm) {
    Policy p = Policy.of(7, Duration.ofSeconds(3)).withAlgorithm(algorithm).withBurst(
        algorithm.usesBurst() ? 9 : 7);
    SplittableRandom random = new SplittableRandom(42);
    for (int round = 0; round < 200; round++) {
      State used = State.fresh(p);
      long t = START + random.nextLong(0, 10_000_000);
      for (int i = random.nextInt(1, 40); i > 0; i--) {
        t += random.nextLong(0, 700_000);
        State.check(used, p, t, random.nextLong(1, 4), true);
      }
      used.clear();
      State fresh = State.fresh(p);
      for (int i = 0; i < 30; i++) {
        t += random.nextLong(-50_000, 900_000); // late checks too
        long cost = random.nextLong(1, 4);
        boolean consume = random.nextInt(4) != 0;
        Decision expected = State.check(fresh, p, t, cost, consume);
        assertThat(State.check(used, p, t, cost, consume)).as("round %d, check %d", round, i)
            .isEqualTo(expected);
        assertThat(State.computeExpiresAt(used, p)).isEqualTo(State.computeExpiresAt(fresh, p));
      }
    }
  }
}

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
 * A GCRA state keeps the emission interval {@code q + r/L} of the policy object that last consumed
 * on it. When a policy of the same name changes its numbers (another object), the next check must
 * divide anew: a random trace switching between two such policies answers exactly as the same trace
 * checked each time on a new state restored from the last one's {@code tat} (which has no interval
 * kept, so divides).
 */
class GcraTuningTest {
  private static final long START = 1_700_000_000_000_000L;

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"GCRA", "LEAKY_BUCKET"})
  void aChangedPolicyIsDividedAnew(Algorithm algorithm) {
    Policy[] policies = {
        Policy.of(7, Duration.ofSeconds(3), algorithm).withBurst(9).withName("api"),
        Policy.of(100, Duration.ofMillis(1_001), algorithm).withBurst(5).withName("api")};
    SplittableRandom random = new SplittableRandom(7);
    State kept = State.fresh(policies[0]);
    long[] tat = null;
    long t = START;
    int switches = 0;
    int which = 0;
    for (int i = 0; i < 20_000; i++) {
      if (random.nextInt(20) == 0) {
        which = 1 - which;
        switches++;
      }
      Policy p = policies[which];
      Gcra divided = (Gcra) State.fresh(p);
      if (tat != null) {
        divided.restore(tat);
      }
      t += random.nextLong(-20_000, 400_000); // late checks too
      long cost = random.nextLong(1, 5);
      boolean consume = random.nextInt(5) != 0;
      Decision expected = State.check(divided, p, t, cost, consume);
      assertThat(State.check(kept, p, t, cost, consume)).as("check %d", i).isEqualTo(expected);
      assertThat(State.computeExpiresAt(kept, p)).isEqualTo(State.computeExpiresAt(divided, p));
      tat = divided.snapshot();
    }
    assertThat(switches).isGreaterThan(500);
  }
}

package dev.ratelimit.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Part of {@link RateLimiterContract}: Keys and namespaces: which checks share state and which never do. */
abstract class KeysContract extends ConsumptionContract {
  // ---------------------------------------------------------------- namespaces and keys

  @Test
  void policiesNeverShareStateUnlessNameAndAlgorithmMatch() {
    String k = key("ns");
    Policy a = policy(Algorithm.FIXED_WINDOW, 2, Duration.ofSeconds(10)).withName("a");
    Policy b = policy(Algorithm.FIXED_WINDOW, 2, Duration.ofSeconds(10)).withName("b");
    Policy aGcra = a.withAlgorithm(Algorithm.GCRA);
    assertThat(limiter.check(k, a, 2).allowed()).isTrue();
    assertThat(limiter.check(k, a).allowed()).isFalse();
    assertThat(limiter.check(k, b, 2).allowed()).as("another name").isTrue();
    assertThat(limiter.check(k, aGcra, 2).allowed()).as("another algorithm").isTrue();
    Policy aRaised = policy(Algorithm.FIXED_WINDOW, 4, Duration.ofSeconds(10)).withName("a");
    assertThat(limiter.check(k, aRaised, 2).allowed()).as("same name, raised limit, same state").isTrue();
    assertThat(limiter.check(k, aRaised).allowed()).isFalse();
  }

  /**
   * A named policy's numbers changed at run time (same name, new limit): the next check uses the
   * new numbers on the state the key already has, nothing is wiped.
   */
  @Test
  void aFixedWindowKeepsItsCountUnderANewLimit() {
    String k = key("changed");
    Policy v1 = Policy.of(5, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW).withName("api");
    Policy v2 = Policy.of(10, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW).withName("api");
    Policy v3 = Policy.of(3, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW).withName("api");
    assertThat(limiter.check(k, v1, 3).remaining()).isEqualTo(2); // START is 20 s into a minute
    Decision raised = limiter.check(k, v2);
    assertThat(raised.allowed()).isTrue();
    assertThat(raised.remaining()).as("10 - (3 + 1): the count was kept").isEqualTo(6);
    Decision lowered = limiter.check(k, v3);
    assertThat(lowered.allowed()).as("4 already counted against a limit of 3").isFalse();
    assertThat(lowered.remaining()).isZero();
    assertThat(lowered.retryAfter()).as("until the window ends").isEqualTo(Duration.ofSeconds(40));
    assertThat(limiter.check(k, v2).remaining()).as("back to 10: still the same count").isEqualTo(5);
  }

  /** The same for GCRA: the theoretical arrival time is kept and read at the new rate. */
  @Test
  void gcraKeepsItsTheoreticalArrivalTimeUnderANewRate() {
    String k = key("changed");
    Policy v1 = Policy.of(10, Duration.ofMinutes(1)).withName("api"); // T = 6 s
    Policy v2 = Policy.of(20, Duration.ofMinutes(1)).withName("api"); // T = 3 s, burst 20
    Policy v3 = Policy.of(2, Duration.ofMinutes(1)).withName("api");  // T = 30 s, burst 2
    assertThat(limiter.check(k, v1, 5).remaining()).isEqualTo(5); // tat = t + 30 s
    Decision raised = limiter.check(k, v2);
    assertThat(raised.allowed()).isTrue();
    assertThat(raised.remaining()).as("30 s of debt is 10 units at the new rate, + 1").isEqualTo(9);
    assertThat(raised.resetAfter()).isEqualTo(Duration.ofSeconds(33));
    Decision lowered = limiter.check(k, v3);
    assertThat(lowered.allowed()).as("33 s of debt exceeds a 60 s burst only after this one: "
        + "33 + 30 - 60 > 0").isFalse();
    assertThat(lowered.retryAfter()).isEqualTo(Duration.ofSeconds(3));
    advanceMicros(3_000_000);
    assertThat(limiter.check(k, v3).allowed()).isTrue();
  }

  @Test
  void anyStringIsAKeyAndKeysNeverCollide() {
    Policy p = Policy.of(1, Duration.ofMinutes(1)).withName("p");
    Policy pc = Policy.of(1, Duration.ofMinutes(1)).withName("p:c");
    Policy braces = Policy.of(1, Duration.ofMinutes(1)).withName("{p}");
    String base = key("");
    List<String> keys = List.of(base + "a:b", base + "a", base + "a:b:c", base + "{a}", base + "{a",
        base + "a}", base + "a b", base + "a\tb", base + "ключ-鍵-🔑", base + "a\nb", base + "\u0000",
        base + "x".repeat(10_240), base + "x".repeat(10_239) + "y", base + "%", base + "\\");
    for (String k : keys) {
      assertThat(limiter.check(k, p).allowed()).as("first use of %s", k.length() > 40 ? k.length() + " chars" : k)
          .isTrue();
    }
    for (String k : keys) {
      assertThat(limiter.check(k, p).allowed()).isFalse();
    }
    // "a" under "p:c" must not be "a:c" under "p" and so on
    assertThat(limiter.check(base + "a", pc).allowed()).isTrue();
    assertThat(limiter.check(base + "a:b", braces).allowed()).isTrue();
    assertThat(limiter.check(base + "{a}", braces).allowed()).isTrue();
  }
}

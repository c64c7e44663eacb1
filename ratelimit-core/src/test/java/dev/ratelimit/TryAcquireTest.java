package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.memory.InMemoryBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code tryAcquire} is {@code check(...).allowed()}: on a plain in-memory limiter it is answered
 * without a decision (the backend's own path), elsewhere through {@code check}. Both must admit and
 * consume exactly what {@code check} does.
 */
class TryAcquireTest {
  private static final Instant START = Instant.ofEpochSecond(1_700_000_000L);

  /**
   * The same random trace (several keys and policies, costs up to 3, late checks, resets) on two
   * plain limiters, one asked with tryAcquire and one with check: the same answer at every step and
   * the same state for every key at the end.
   */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void answersAndConsumesAsCheckOnAPlainLimiter(Algorithm algorithm) {
    ManualClock clock = ManualClock.at(START);
    List<Policy> policies = List.of(
        Policy.of(5, Duration.ofSeconds(2)).withAlgorithm(algorithm).withBurst(algorithm.usesBurst() ? 7 : 5),
        Policy.of(3, Duration.ofMillis(700)).withAlgorithm(algorithm).withName("second"));
    SplittableRandom random = new SplittableRandom(7);
    try (RateLimiter answers = RateLimiter.builder().clock(clock).backend(InMemoryBackend.create()).build();
        RateLimiter decisions = RateLimiter.builder().clock(clock).backend(InMemoryBackend.create()).build()) {
      assertThat(((DefaultRateLimiter) answers).isPlain()).as("the fast path is the one tested").isTrue();
      int allowed = 0;
      for (int i = 0; i < 5_000; i++) {
        clock.advanceMicros(random.nextLong(-20_000, 150_000)); // now and then a late check
        String key = "k" + random.nextInt(4);
        Policy p = policies.get(random.nextInt(policies.size()));
        if (random.nextInt(200) == 0) {
          answers.reset(key, p);
          decisions.reset(key, p);
          continue;
        }
        long cost = random.nextLong(1, 4);
        boolean expected = decisions.check(key, p, cost).allowed();
        assertThat(answers.tryAcquire(key, p, cost)).as("step %d", i).isEqualTo(expected);
        allowed += expected ? 1 : 0;
      }
      assertThat(allowed).as("the trace both allows and denies").isBetween(500, 4_500);
      for (int k = 0; k < 4; k++) {
        for (Policy p : policies) {
          assertThat(answers.inspect("k" + k, p)).isEqualTo(decisions.inspect("k" + k, p));
        }
      }
    }
  }

  @Test
  void oneUnitByDefaultAndTheSameValidationAsCheck() {
    ManualClock clock = ManualClock.at(START);
    Policy p = Policy.of(2, Duration.ofSeconds(10));
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(InMemoryBackend.create()).build()) {
      assertThat(limiter.tryAcquire("k", p)).isTrue();
      assertThat(limiter.tryAcquire("k", p)).isTrue();
      assertThat(limiter.tryAcquire("k", p)).isFalse();
      assertThat(limiter.inspect("k", p).remaining()).isZero();
      assertThatThrownBy(() -> limiter.tryAcquire("k", p, 3))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cost 3");
      assertThatThrownBy(() -> limiter.tryAcquire("", p))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key");
    }
  }

  /**
   * The in-memory backend failing inside a check (a bug, {@link RenewalHook}): the fast path's
   * answer is the failure mode's, as check's is, nothing escapes into the caller, and the key's
   * lock is left free for the next check.
   */
  @Test
  void aFailingBackendLeavesTheAnswerToTheFailureMode() throws Exception {
    InMemoryBackend backend = InMemoryBackend.create();
    try (RateLimiter limiter = RateLimiter.builder().clock(ManualClock.at(START)).backend(backend)
        .failureMode(FailureMode.FAIL_CLOSED).build()) {
      assertThat(((DefaultRateLimiter) limiter).isPlain()).isTrue();
      Policy first = Policy.of(1, Duration.ofMinutes(1)).withName("first");
      Policy second = Policy.of(1, Duration.ofMinutes(1)).withName("second");
      assertThat(limiter.tryAcquire("k", first)).isTrue();
      RenewalHook.fail(backend);
      // a second policy on the key moves the key's expiry, so the hook runs inside the check
      assertThat(limiter.tryAcquire("k", second)).as("FAIL_CLOSED decides, though the check would pass").isFalse();
      RenewalHook.clear(backend);
      assertThat(limiter.tryAcquire("k", first)).as("the key answers again: its one unit is used").isFalse();
      assertThat(limiter.tryAcquire("other", first)).isTrue();
    }
  }

  /** With a listener (not plain) the answer goes through check: the decision is reported. */
  @Test
  void aListenerHearsEveryAnswer() {
    ManualClock clock = ManualClock.at(START);
    RecordingListener listener = new RecordingListener();
    Policy p = Policy.of(1, Duration.ofSeconds(10)).withName("one");
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(InMemoryBackend.create())
        .listener(listener).build()) {
      assertThat(((DefaultRateLimiter) limiter).isPlain()).isFalse();
      assertThat(limiter.tryAcquire("k", p)).isTrue();
      assertThat(limiter.tryAcquire("k", p)).isFalse();
      assertThat(listener.decisions).containsExactly("one:ALLOWED", "one:DENIED");
    }
  }

  /** A shadow policy's denial is an allowed answer, as check's. */
  @Test
  void aShadowPolicyIsNeverRefused() {
    ManualClock clock = ManualClock.at(START);
    Policy p = Policy.of(1, Duration.ofSeconds(10)).withName("trial");
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(InMemoryBackend.create())
        .shadowPolicies(Set.of("trial")).build()) {
      assertThat(limiter.tryAcquire("k", p)).isTrue();
      assertThat(limiter.tryAcquire("k", p)).as("denied, in shadow").isTrue();
      assertThat(limiter.inspect("k", p).allowed()).isFalse();
    }
  }
}

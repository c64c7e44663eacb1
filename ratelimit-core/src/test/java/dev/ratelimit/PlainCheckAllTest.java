package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.memory.InMemoryBackend;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code checkAll} on a plain in-memory limiter (no listener, near-cache or shadow policies) goes
 * straight to the backend, as {@code check} does; it must answer exactly as the full path does.
 */
class PlainCheckAllTest {
  private static final Instant START = Instant.ofEpochSecond(1_700_000_000L);

  /** The same random trace on a plain limiter and on one with a listener (the full path). */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void answersAsTheFullPath(Algorithm algorithm) {
    ManualClock clock = ManualClock.at(START);
    List<Policy> policies = List.of(
        Policy.of(5, Duration.ofSeconds(2)).withAlgorithm(algorithm).withBurst(algorithm.usesBurst() ? 7 : 5),
        Policy.of(3, Duration.ofMillis(700)).withAlgorithm(algorithm).withName("second"));
    SplittableRandom random = new SplittableRandom(11);
    try (RateLimiter plain = RateLimiter.builder().clock(clock).backend(InMemoryBackend.create()).build();
        RateLimiter full = RateLimiter.builder().clock(clock).backend(InMemoryBackend.create())
            .listener(new RecordingListener()).build()) {
      assertThat(((DefaultRateLimiter) plain).isPlain()).as("the fast path is the one tested").isTrue();
      assertThat(((DefaultRateLimiter) full).isPlain()).isFalse();
      int allowed = 0;
      for (int i = 0; i < 3_000; i++) {
        clock.advanceMicros(random.nextLong(-20_000, 150_000));
        String key = "k" + random.nextInt(3);
        List<Policy> asked = random.nextBoolean() ? policies : List.of(policies.get(random.nextInt(2)));
        long cost = random.nextLong(1, 3);
        MultiDecision expected = full.checkAll(key, asked, cost);
        assertThat(plain.checkAll(key, asked, cost)).as("step %d", i).isEqualTo(expected);
        allowed += expected.allowed() ? 1 : 0;
      }
      assertThat(allowed).as("the trace both allows and denies").isBetween(300, 2_700);
    }
  }

  /**
   * The backend failing inside a plain checkAll (a bug, {@link RenewalHook}): the failure mode
   * answers, nothing escapes, and the key answers again afterwards.
   */
  @Test
  void aFailingBackendLeavesTheAnswerToTheFailureMode() throws Exception {
    InMemoryBackend backend = InMemoryBackend.create();
    try (RateLimiter limiter = RateLimiter.builder().clock(ManualClock.at(START)).backend(backend)
        .failureMode(FailureMode.FAIL_CLOSED).build()) {
      assertThat(((DefaultRateLimiter) limiter).isPlain()).isTrue();
      Policy first = Policy.of(1, Duration.ofMinutes(1)).withName("first");
      Policy second = Policy.of(1, Duration.ofMinutes(1)).withName("second");
      assertThat(limiter.checkAll("k", List.of(first), 1).allowed()).isTrue();
      RenewalHook.fail(backend);
      MultiDecision failed = limiter.checkAll("k", List.of(second), 1);
      assertThat(failed.allowed()).as("FAIL_CLOSED decides, though the check would pass").isFalse();
      assertThat(failed.decisions()).allMatch(Decision::isDegraded);
      RenewalHook.clear(backend);
      assertThat(limiter.checkAll("k", List.of(first, second), 1).allowed()).as("first's unit is used").isFalse();
      assertThat(limiter.checkAll("other", List.of(first, second), 1).allowed()).isTrue();
    }
  }
}

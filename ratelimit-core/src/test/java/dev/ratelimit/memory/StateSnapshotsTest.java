package dev.ratelimit.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A snapshot restored once and evaluated many times, by several threads at once, answers exactly
 * as a snapshot restored afresh for every evaluation: evaluating changes nothing.
 */
class StateSnapshotsTest {
  private static final long T = 1_700_000_000_000_000L;

  /** A snapshot in each algorithm's layout (see StateSnapshots), of a key that has just been busy. */
  private static long[] snapshot(Algorithm algorithm) {
    return switch (algorithm) {
      case FIXED_WINDOW -> new long[] {T - T % 10_000_000L, 9};
      case SLIDING_WINDOW -> new long[] {T - T % 10_000_000L, 6, 4};
      case TOKEN_BUCKET -> new long[] {10_000_000L, T}; // one token left (a token is W credits)
      case GCRA, LEAKY_BUCKET -> new long[] {T + 8_500_000L, 3};
      case SLIDING_LOG -> new long[] {T - 9_000_000L, T - 6_000_000L, T - 5_000_000L, T - 5_000_000L,
          T - 2_000_000L, T - 1_000_000L, T - 1_000_000L, T, T, T};
    };
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void aRestoredSnapshotAnswersAsAFreshlyRestoredOneOnEveryThread(Algorithm algorithm) throws Exception {
    Policy p = Policy.of(10, Duration.ofSeconds(10)).withAlgorithm(algorithm).withBurst(10);
    long[] snapshot = snapshot(algorithm);
    List<Decision> expected = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      expected.add(StateSnapshots.evaluate(p, snapshot, T + i * 50_000L, 1 + i % 3));
    }
    assertThat(expected).as("the trace both allows and denies")
        .anyMatch(Decision::allowed).anyMatch(d -> !d.allowed());

    StateSnapshots.Restored restored = StateSnapshots.restore(p, snapshot);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<List<Decision>>> answers = new ArrayList<>();
      for (int thread = 0; thread < 4; thread++) {
        answers.add(pool.submit(() -> {
          List<Decision> got = new ArrayList<>();
          for (int round = 0; round < 25; round++) {
            got.clear();
            for (int i = 0; i < 400; i++) {
              got.add(restored.evaluate(p, T + i * 50_000L, 1 + i % 3));
            }
          }
          return got;
        }));
      }
      for (Future<List<Decision>> answer : answers) {
        assertThat(answer.get()).isEqualTo(expected);
      }
    } finally {
      pool.shutdownNow();
    }
  }
}

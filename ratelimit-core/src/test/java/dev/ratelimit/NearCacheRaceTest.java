package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.spi.Evaluation;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Answers arrive out of order: an older denial must never replace a newer allowed answer or reset. */
class NearCacheRaceTest {
  private static final long T1 = 1_700_000_000_000_000L;
  private static final long T2 = T1 + 1_000;
  private final Policy policy = Policy.of(2, Duration.ofMinutes(1));
  /** GCRA state of an exhausted key at T1: tat = T1 + 60 s. */
  private final long[] exhausted = {T1 + 60_000_000L, 0};

  private Evaluation denialAt(long t) {
    return new Evaluation(Decision.denied(policy, 0, 30_000_000L, 60_000_000L), exhausted, t);
  }

  @Test
  void anOlderDenialDoesNotReplaceANewerAllowedAnswer() {
    NearCache cache = new NearCache(100);
    cache.remember("k", policy, 1, T2, new Evaluation(Decision.allowed(policy, 0, 60_000_000L, 0), new long[0], T2),
        cache.resets("k"));
    cache.remember("k", policy, 1, T1, denialAt(T1), cache.resets("k"));
    assertThat(cache.answer("k", policy, 1, T2 + 1)).isNull();
  }

  @Test
  void anOlderDenialDoesNotOutliveAReset() {
    NearCache cache = new NearCache(100);
    long sent = cache.resets("k");
    cache.forget("k", policy, T2);
    cache.remember("k", policy, 1, T1, denialAt(T1), sent);
    assertThat(cache.answer("k", policy, 1, T2 + 1)).isNull();
  }

  @Test
  void aDenialSentBeforeAResetIsNotKeptWhateverItsTime() {
    // the reset read the clock at T1 before its round trip; a check that read it later (T2) was
    // answered by Redis before the reset reached it: its denial describes the state before the reset
    NearCache cache = new NearCache(100);
    long sent = cache.resets("k");
    cache.forget("k", policy, T1);
    cache.remember("k", policy, 1, T2, denialAt(T2), sent);
    assertThat(cache.answer("k", policy, 1, T2 + 1)).as("arriving after the reset").isNull();

    NearCache early = new NearCache(100);
    long sentEarly = early.resets("k");
    early.remember("k", policy, 1, T2, denialAt(T2), sentEarly);
    assertThat(early.answer("k", policy, 1, T2 + 1)).as("held before the reset").isNotNull();
    early.forget("k", policy, T1);
    assertThat(early.answer("k", policy, 1, T2 + 1)).as("arriving before the reset, replaced by it").isNull();
  }

  @Test
  void aSnapshotItsAlgorithmCannotReadIsDroppedNotThrownAndLogged() {
    NearCache cache = new NearCache(100);
    Evaluation broken = new Evaluation(Decision.denied(policy, 0, 30_000_000L, 60_000_000L), new long[1], T1);
    try (LogCapture log = new LogCapture()) {
      cache.remember("k", policy, 1, T1, broken, cache.resets("k")); // a custom backend's bug: GCRA needs two numbers
      assertThat(cache.answer("k", policy, 1, T1 + 1)).as("the backend answers instead").isNull();
      cache.remember("k", policy, 1, T1, broken, cache.resets("k"));
      assertThat(cache.answerAll("k", List.of(policy), 1, T1 + 1)).isNull();
      assertThat(cache.size()).as("dropped").isZero();
      assertThat(log.lines(java.util.logging.Level.WARNING)).as("one line per policy per 10 s").singleElement()
          .satisfies(line -> assertThat(line).contains("'" + policy.name() + "'").contains("1 number for GCRA"));
    }
  }

  /** The same for a key over 128 characters, kept in its bounded form: the reset guard reads the same stripe. */
  @Test
  void aDenialSentBeforeAResetOfALongKeyIsNotKept() {
    String key = "k".repeat(300);
    NearCache cache = new NearCache(100);
    long sent = cache.resets(key);
    cache.forget(key, policy, T1);
    cache.remember(key, policy, 1, T2, denialAt(T2), sent);
    assertThat(cache.answer(key, policy, 1, T2 + 1)).as("arriving after the reset").isNull();
    cache.remember(key, policy, 1, T2, denialAt(T2), cache.resets(key)); // sent after the reset
    assertThat(cache.answer(key, policy, 1, T2 + 1)).as("a later denial is answered locally").isNotNull();
  }

  @Test
  void aNewerDenialIsAnsweredLocally() {
    NearCache cache = new NearCache(100);
    cache.forget("k", policy, T1);
    cache.remember("k", policy, 1, T1, denialAt(T1), cache.resets("k")); // sent after the reset
    Decision local = cache.answer("k", policy, 1, T1 + 1_000_000L);
    assertThat(local).isNotNull();
    assertThat(local.allowed()).isFalse();
    assertThat(local.retryAfter()).isEqualTo(Duration.ofSeconds(29));
  }
}

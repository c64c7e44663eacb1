package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.spi.Evaluation;
import java.time.Duration;
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
    cache.remember("k", policy, 1, T2, new Evaluation(Decision.allowed(policy, 0, 60_000_000L, 0), new long[0], T2));
    cache.remember("k", policy, 1, T1, denialAt(T1));
    assertThat(cache.answer("k", policy, 1, T2 + 1)).isNull();
  }

  @Test
  void anOlderDenialDoesNotOutliveAReset() {
    NearCache cache = new NearCache(100);
    cache.forget("k", policy, T2);
    cache.remember("k", policy, 1, T1, denialAt(T1));
    assertThat(cache.answer("k", policy, 1, T2 + 1)).isNull();
  }

  @Test
  void aNewerDenialIsAnsweredLocally() {
    NearCache cache = new NearCache(100);
    cache.forget("k", policy, T1);
    cache.remember("k", policy, 1, T1, denialAt(T1));
    Decision local = cache.answer("k", policy, 1, T1 + 1_000_000L);
    assertThat(local).isNotNull();
    assertThat(local.allowed()).isFalse();
    assertThat(local.retryAfter()).isEqualTo(Duration.ofSeconds(29));
  }
}

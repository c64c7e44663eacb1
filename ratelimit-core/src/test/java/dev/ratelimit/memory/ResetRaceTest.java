package dev.ratelimit.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Policy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The cache may drop a key's entry for size while a check holds it; the check then puts the entry
 * back, so that its consumption is not lost. A reset of that key in the meantime finds no entry and
 * has nothing to clear: putting the entry back afterwards would undo the reset. The check must run
 * again on a fresh entry instead, as if the reset had come first.
 */
class ResetRaceTest {
  static final long T0 = 1_700_000_000_000_000L;
  static final Policy GCRA = Policy.of(10, Duration.ofSeconds(60), Algorithm.GCRA);

  /**
   * At the key's next renewal (its lock held), other keys are checked until the cache has dropped
   * the key for size, then the key is reset.
   */
  private static AtomicBoolean evictAndResetDuringTheNextRenewal(InMemoryBackend backend, String key, long now) {
    AtomicBoolean done = new AtomicBoolean();
    backend.renewalHook = oldHold -> {
      if (done.get()) {
        return;
      }
      for (int i = 0; i < 1_000 && backend.indexes(key); i++) {
        for (int j = 0; j < 3; j++) { // a few checks each: the cache's admission prefers keys used more than once
          backend.check("other-" + i, GCRA, 1, now);
        }
      }
      assertThat(backend.indexes(key)).as("the cache dropped the key").isFalse();
      backend.reset(key, GCRA, now);
      done.set(true);
    };
    return done;
  }

  @Test
  void aResetWhileTheCacheDropsAKeyBeingCheckedIsNotUndone() {
    InMemoryBackend backend = InMemoryBackend.builder().maximumKeys(2).build();
    for (int i = 0; i < 9; i++) {
      assertThat(backend.check("k", GCRA, 1, T0).allowed()).isTrue();
    }
    AtomicBoolean raced = evictAndResetDuringTheNextRenewal(backend, "k", T0);
    // a cost-1 check whose renewal runs the hook: 9 of 10 used before it, so it passes either way
    assertThat(backend.check("k", GCRA, 1, T0).allowed()).isTrue();
    backend.renewalHook = null;
    assertThat(raced).isTrue();
    assertThat(backend.inspect("k", GCRA, T0).remaining())
        .as("the reset came before the check: only the check's unit is used").isEqualTo(9);
  }

  @Test
  void theSameThroughCheckAll() {
    InMemoryBackend backend = InMemoryBackend.builder().maximumKeys(2).build();
    List<Policy> one = List.of(GCRA);
    for (int i = 0; i < 9; i++) {
      assertThat(backend.checkAll("k", one, 1, T0).allowed()).isTrue();
    }
    AtomicBoolean raced = evictAndResetDuringTheNextRenewal(backend, "k", T0);
    assertThat(backend.checkAll("k", one, 1, T0).allowed()).isTrue();
    backend.renewalHook = null;
    assertThat(raced).isTrue();
    assertThat(backend.inspect("k", GCRA, T0).remaining()).isEqualTo(9);
  }
}

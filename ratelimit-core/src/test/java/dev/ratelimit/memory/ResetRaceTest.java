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

  /** A backend holding at most 2 keys, "k" among them with 9 of its 10 units used. */
  private static InMemoryBackend nineUsed(boolean throughCheckAll) {
    InMemoryBackend backend = InMemoryBackend.builder().maximumKeys(2).build();
    for (int i = 0; i < 9; i++) {
      boolean allowed = throughCheckAll ? backend.checkAll("k", List.of(GCRA), 1, T0).allowed()
          : backend.check("k", GCRA, 1, T0).allowed();
      assertThat(allowed).isTrue();
    }
    return backend;
  }

  /**
   * At the key's next renewal (its lock held), the cache drops the key as a size eviction would;
   * then {@code then} runs. Once only: nested checks do not run it again.
   */
  private static AtomicBoolean dropAtTheNextRenewal(InMemoryBackend backend, Runnable then) {
    AtomicBoolean ran = new AtomicBoolean();
    backend.renewalHook = oldHold -> {
      if (ran.getAndSet(true)) {
        return;
      }
      backend.evictForTest("k");
      assertThat(backend.indexes("k")).as("the cache dropped the key").isFalse();
      then.run();
    };
    return ran;
  }

  /** The key's units in use now: the reset came first, so only the racing check's one. */
  private static void assertOnlyTheRacingCheckCounts(InMemoryBackend backend, AtomicBoolean raced) {
    backend.renewalHook = null;
    backend.restoreHook = null;
    assertThat(raced).isTrue();
    assertThat(backend.inspect("k", GCRA, T0).remaining())
        .as("the reset came before the check: only the check's unit is used").isEqualTo(9);
  }

  @Test
  void aResetWhileTheCacheDropsAKeyBeingCheckedIsNotUndone() {
    InMemoryBackend backend = nineUsed(false);
    AtomicBoolean raced = dropAtTheNextRenewal(backend, () -> backend.reset("k", GCRA, T0));
    // its renewal runs the hook; 9 of 10 used before it, so it passes either way
    assertThat(backend.check("k", GCRA, 1, T0).allowed()).isTrue();
    assertOnlyTheRacingCheckCounts(backend, raced);
  }

  @Test
  void theSameThroughCheckAll() {
    InMemoryBackend backend = nineUsed(true);
    AtomicBoolean raced = dropAtTheNextRenewal(backend, () -> backend.reset("k", GCRA, T0));
    assertThat(backend.checkAll("k", List.of(GCRA), 1, T0).allowed()).isTrue();
    assertOnlyTheRacingCheckCounts(backend, raced);
  }

  @Test
  void aResetJustBeforeTheEntryGoesBackIsNotUndoneEither() {
    InMemoryBackend backend = nineUsed(false);
    AtomicBoolean reset = new AtomicBoolean();
    backend.restoreHook = key -> {
      if (!reset.getAndSet(true)) {
        backend.reset(key, GCRA, T0); // the entry is in neither the index nor the cache: nothing to clear
      }
    };
    AtomicBoolean dropped = dropAtTheNextRenewal(backend, () -> { });
    assertThat(backend.check("k", GCRA, 1, T0).allowed()).isTrue();
    assertThat(reset).as("the check put the dropped entry back").isTrue();
    assertOnlyTheRacingCheckCounts(backend, dropped);
  }
}

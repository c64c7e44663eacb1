package dev.ratelimit.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Policy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The cache's clock may pass an entry's old hold while a check is renewing it (another thread
 * checked with a slightly later {@code now}); the cache then ignores the new expiry and later evicts
 * the entry as expired. The check's consumption still matters, so the entry must stay the key's
 * entry: the key admits exactly its capacity, the cache's eviction notwithstanding.
 */
class RenewalRaceTest {
  static final long T0 = 1_700_000_000_000_000L;
  static final Policy GCRA = Policy.of(100, Duration.ofSeconds(60), Algorithm.GCRA);
  static final Policy WINDOW = Policy.of(1000, Duration.ofHours(1), Algorithm.SLIDING_LOG).withName("hourly");

  /** At the key's first renewal, another thread's check moves the cache's clock just past the old hold. */
  private static void raceTheFirstRenewal(InMemoryBackend backend) {
    AtomicInteger renewals = new AtomicInteger();
    backend.renewalHook = oldHold -> {
      if (renewals.getAndIncrement() == 0) {
        backend.inspect("elsewhere", GCRA, oldHold + 1);
      }
    };
  }

  @Test
  void aRenewalTheCacheIgnoredKeepsTheKeysState() {
    InMemoryBackend backend = InMemoryBackend.create();
    assertThat(backend.check("k", GCRA, 1, T0).allowed()).isTrue(); // hold: T0 + 0.6 s + 60 s
    long t1 = T0 + 60_500_000; // the key is fresh again, 100 ms before its hold
    raceTheFirstRenewal(backend);
    assertThat(backend.check("k", GCRA, 1, t1).allowed()).isTrue(); // renews; the cache ignores it
    backend.renewalHook = null;
    backend.size(); // the cache's maintenance evicts what it holds expired

    int allowed = 0;
    for (int i = 0; i < 150; i++) {
      allowed += backend.check("k", GCRA, 1, t1).allowed() ? 1 : 0;
    }
    assertThat(allowed).as("capacity 100, one already used at t1").isEqualTo(99);
  }

  @Test
  void theSameThroughCheckAll() {
    InMemoryBackend backend = InMemoryBackend.create();
    List<Policy> both = List.of(GCRA, WINDOW);
    assertThat(backend.checkAll("k", both, 1, T0).allowed()).isTrue();
    long t1 = T0 + 60_500_000;
    // the hourly log keeps the key's deadline an hour out: renew through GCRA alone on its own key
    assertThat(backend.checkAll("j", List.of(GCRA), 1, T0).allowed()).isTrue();
    raceTheFirstRenewal(backend);
    assertThat(backend.checkAll("j", List.of(GCRA), 1, t1).allowed()).isTrue();
    backend.renewalHook = null;
    backend.size();

    int allowed = 0;
    for (int i = 0; i < 150; i++) {
      allowed += backend.checkAll("j", List.of(GCRA), 1, t1).allowed() ? 1 : 0;
    }
    assertThat(allowed).isEqualTo(99);
    assertThat(backend.inspect("k", WINDOW, t1).remaining()).isEqualTo(999);
  }
}

package dev.ratelimit.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Decision;
import dev.ratelimit.KeyedPolicy;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The in-memory backend's cross-key check: its locks, new keys, dropped entries and bounds. */
class CrossKeyTest {
  private static final long NOW = 1_700_000_000_000_000L;
  private final Policy p = Policy.of(1_000_000, Duration.ofHours(1)).withName("p");

  /**
   * Threads locking the same keys listed in opposite orders, beside one-key checks and resets of
   * those keys: the global lock order leaves no cycle, and every admitted check consumed every key.
   */
  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void oppositeOrdersNeverDeadlock() throws Exception {
    InMemoryBackend backend = InMemoryBackend.create();
    List<KeyedPolicy> ab = List.of(KeyedPolicy.of("a", p), KeyedPolicy.of("b", p), KeyedPolicy.of("c", p));
    List<KeyedPolicy> ba = List.of(KeyedPolicy.of("c", p), KeyedPolicy.of("b", p), KeyedPolicy.of("a", p));
    ExecutorService pool = Executors.newFixedThreadPool(5);
    AtomicLong admitted = new AtomicLong();
    AtomicLong bChecks = new AtomicLong();
    CountDownLatch start = new CountDownLatch(1);
    List<Future<?>> futures = new ArrayList<>();
    try {
      for (int t = 0; t < 4; t++) {
        List<KeyedPolicy> checks = t % 2 == 0 ? ab : ba;
        futures.add(pool.submit(() -> {
          start.await();
          for (int i = 0; i < 20_000; i++) {
            if (backend.checkAll(checks, 1, NOW).allowed()) {
              admitted.incrementAndGet();
            }
          }
          return null;
        }));
      }
      futures.add(pool.submit(() -> {
        start.await();
        for (int i = 0; i < 20_000; i++) {
          backend.check("b", p, 1, NOW);
          bChecks.incrementAndGet();
        }
        return null;
      }));
      start.countDown();
      for (Future<?> f : futures) {
        f.get(50, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(admitted).hasValue(80_000);
    assertThat(backend.inspect("a", p, NOW).remaining()).isEqualTo(1_000_000 - 80_000);
    assertThat(backend.inspect("c", p, NOW).remaining()).isEqualTo(1_000_000 - 80_000);
    assertThat(backend.inspect("b", p, NOW).remaining()).isEqualTo(1_000_000 - 80_000 - bChecks.get());
  }

  /** A key with two pairs and a new key: the known key locked once, the new one published with its states. */
  @Test
  void aKeyWithTwoPairsAndANewKey() {
    InMemoryBackend backend = InMemoryBackend.create();
    Policy q = Policy.of(3, Duration.ofSeconds(1)).withName("q");
    backend.check("known", p, 1, NOW);
    MultiDecision m = backend.checkAll(List.of(KeyedPolicy.of("known", p), KeyedPolicy.of("new", q),
        KeyedPolicy.of("known", q), KeyedPolicy.of("new", p)), 2, NOW);
    assertThat(m.allowed()).isTrue();
    assertThat(m.decisions()).extracting(Decision::remaining).containsExactly(1_000_000L - 3, 1L, 1L, 1_000_000L - 2);
    assertThat(backend.indexes("new")).isTrue();
    assertThat(backend.inspect("new", q, NOW).remaining()).isEqualTo(1);
    assertThat(backend.inspect("new", p, NOW).remaining()).isEqualTo(1_000_000 - 2);
    assertThat(backend.inspect("known", q, NOW).remaining()).isEqualTo(1);
    MultiDecision denied = backend.checkAll(List.of(KeyedPolicy.of("other", p), KeyedPolicy.of("new", q)), 2, NOW);
    assertThat(denied.allowed()).isFalse();
    assertThat(backend.indexes("other")).as("a denied check publishes no new key").isFalse();
  }

  /** An entry the cache dropped is not used again: the check runs on the key's next entry. */
  @Test
  void aDroppedEntryIsReplaced() {
    InMemoryBackend backend = InMemoryBackend.create();
    List<KeyedPolicy> checks = List.of(KeyedPolicy.of("x", p), KeyedPolicy.of("y", p));
    backend.checkAll(checks, 5, NOW);
    backend.evictForTest("x");
    assertThat(backend.indexes("x")).isFalse();
    MultiDecision m = backend.checkAll(checks, 1, NOW);
    assertThat(m.decisions()).extracting(Decision::remaining).containsExactly(1_000_000L - 1, 1_000_000L - 6);
    assertThat(backend.indexes("x")).isTrue();
  }

  /** When the kept states fill the bound, new keys of a cross-key check are decided fresh and not kept. */
  @Test
  void newKeysBeyondTheBoundAreDecidedFreshAndNotKept() {
    InMemoryBackend backend = InMemoryBackend.builder().maximumKeys(2).build();
    Policy one = Policy.of(1, Duration.ofHours(1)).withName("one");
    assertThat(backend.check("kept-1", one, 1, NOW).allowed()).isTrue(); // took it all: kept
    assertThat(backend.check("kept-2", one, 1, NOW).allowed()).isTrue();
    MultiDecision m = backend.checkAll(List.of(KeyedPolicy.of("n1", one), KeyedPolicy.of("n2", one)), 1, NOW);
    assertThat(m.allowed()).isTrue();
    assertThat(backend.keysNotHeld()).isPositive();
    assertThat(backend.indexes("n1")).isFalse();
    assertThat(backend.checkAll(List.of(KeyedPolicy.of("kept-1", one), KeyedPolicy.of("n1", one)), 1, NOW).allowed())
        .as("a held limit is not lifted").isFalse();
  }
}

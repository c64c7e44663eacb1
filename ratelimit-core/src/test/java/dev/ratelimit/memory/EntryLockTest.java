package dev.ratelimit.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Policy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Each key's entry has its own lock: threads on the same keys, under two policies, by single and
 * multi-policy checks, admit exactly the capacity per key and policy; threads on other keys do not
 * wait on them.
 */
class EntryLockTest {
  private static final long NOW = 1_700_000_000_000_000L;
  private static final int THREADS = 8;
  private static final int KEYS = 16;

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void threadsAdmitExactlyTheCapacityPerKeyAndPolicy(Algorithm algorithm) throws Exception {
    Policy a = Policy.of(300, Duration.ofMinutes(1), algorithm).withName("a");
    Policy b = Policy.of(500, Duration.ofMinutes(1), algorithm).withName("b");
    InMemoryBackend backend = InMemoryBackend.create();
    AtomicLong admittedA = new AtomicLong();
    AtomicLong admittedB = new AtomicLong();
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        int self = t;
        futures.add(pool.submit(() -> {
          start.await();
          for (int i = 0; i < 6_000; i++) { // 3,000 per key: enough single checks to exhaust each policy
            String key = "k" + ((i + self) % KEYS);
            if (i % 3 == 0) {
              if (backend.checkAll(key, List.of(a, b), 1, NOW).allowed()) {
                admittedA.incrementAndGet();
                admittedB.incrementAndGet();
              }
            } else if (backend.check(key, i % 3 == 1 ? a : b, 1, NOW).allowed()) {
              (i % 3 == 1 ? admittedA : admittedB).incrementAndGet();
            }
          }
          return null;
        }));
      }
      start.countDown();
      for (Future<?> f : futures) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(admittedA.get()).isEqualTo(300L * KEYS);
    assertThat(admittedB.get()).isEqualTo(500L * KEYS);
    for (int k = 0; k < KEYS; k++) {
      assertThat(backend.inspect("k" + k, a, NOW).remaining()).isZero();
      assertThat(backend.inspect("k" + k, b, NOW).remaining()).isZero();
    }
    assertThat(backend.size()).as("one state per key and policy").isEqualTo(2L * KEYS);
  }
}

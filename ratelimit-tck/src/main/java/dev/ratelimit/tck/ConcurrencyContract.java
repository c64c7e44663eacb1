package dev.ratelimit.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.spi.Backend;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Many threads and many limiters on one key, at one manual time, admit exactly the capacity.
 * Extend it and supply backends: each limiter gets its own {@link #newBackend(int)}, sharing
 * storage as the instances of one application would.
 */
public abstract class ConcurrencyContract {
  /** The number of threads per limiter. */
  protected static final int THREADS = 16;

  /**
   * The window of every policy here: a day, which no run outlives. The limiters' clock stands
   * still, but a remote store expires keys in real time ({@code PX} TTLs in Redis): with a minute,
   * a fixed window at this clock's time had 40 s left, and a run slowed by a loaded machine saw
   * its keys expire under it (more admitted than the limit, or consumption forgotten).
   */
  protected static final Duration WINDOW = Duration.ofDays(1);

  /** A new backend for limiter {@code instance}; backends of one test share storage. */
  protected abstract Backend newBackend(int instance);

  /** How many limiter instances share the key; 1 for an embedded backend. */
  protected int instances() {
    return 1;
  }

  /**
   * Whether a check of pairs of different keys is all or nothing whatever the keys (true, the
   * default); false for one that is all or nothing per group of keys only (Redis Cluster, per hash
   * slot): then a key's consumption may exceed its admissions, never its limit.
   */
  protected boolean atomicAcrossKeys() {
    return true;
  }

  /** How many checks each thread makes. */
  protected int checksPerThread() {
    return 200;
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void threadsOnOneKeyAdmitExactlyTheLimit(Algorithm algorithm) throws Exception {
    Policy p = Policy.of(1_000, WINDOW).withAlgorithm(algorithm);
    List<String> keys = List.of("tck:concurrency:" + UUID.randomUUID());
    assertThat(run(p, keys)).isEqualTo(1_000);
  }

  /** Cost 3 against a capacity of 1,000: exactly 333 checks pass. */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void threadsWithACostAdmitExactlyWhatFits(Algorithm algorithm) throws Exception {
    Policy p = Policy.of(1_000, WINDOW).withAlgorithm(algorithm);
    String key = "tck:concurrency:" + UUID.randomUUID();
    assertThat(run(p, List.of(key), 3)).isEqualTo(333);
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void threadsOnManyKeysAdmitExactlyTheLimitPerKey(Algorithm algorithm) throws Exception {
    Policy p = Policy.of(20, WINDOW).withAlgorithm(algorithm);
    List<String> keys = new ArrayList<>();
    String prefix = "tck:concurrency:" + UUID.randomUUID() + ":";
    for (int i = 0; i < 50; i++) {
      keys.add(prefix + i);
    }
    assertThat(run(p, keys)).isEqualTo(20L * keys.size());
  }

  /**
   * {@code checkAll} of two policies on one key from every thread: all or nothing, so the roomier
   * policy is consumed exactly as often as the tighter one admits (a backend that consumes it
   * before finding the other full, or applies the policies one by one, leaves it short).
   */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void threadsCheckingTwoPoliciesTogetherConsumeNeitherOnADenial(Algorithm algorithm) throws Exception {
    Policy tight = Policy.of(200, WINDOW).withAlgorithm(algorithm).withName("tight");
    Policy roomy = Policy.of(1_000, WINDOW).withAlgorithm(algorithm).withName("roomy");
    String key = "tck:concurrency:" + UUID.randomUUID();
    long[] roomyLeft = new long[1];
    long admitted = run(tight.capacity(), List.of(key),
        (limiter, k) -> limiter.checkAll(k, List.of(tight, roomy), 1).allowed(),
        limiter -> roomyLeft[0] = limiter.inspect(key, roomy).remaining());
    assertThat(admitted).isEqualTo(200);
    assertThat(roomyLeft[0]).as("the roomy policy, consumed only by admitted calls").isEqualTo(800);
  }

  /**
   * {@code checkAll} of pairs of different keys from every thread, over overlapping sets of keys
   * (each call takes three of six keys, one of them with a second policy): no deadlock, no key
   * admitted beyond its limit, and each key consumed exactly by the calls admitted (nothing by a
   * denied one).
   */
  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"GCRA", "SLIDING_LOG", "FIXED_WINDOW"})
  @org.junit.jupiter.api.Timeout(value = 3, unit = TimeUnit.MINUTES)
  void threadsCheckingOverlappingKeysTogetherAdmitWithinEveryLimit(Algorithm algorithm) throws Exception {
    Policy p = Policy.of(20, WINDOW).withAlgorithm(algorithm).withName("per-key");
    Policy second = Policy.of(1_000, WINDOW).withAlgorithm(algorithm).withName("second");
    String prefix = "tck:concurrency:" + UUID.randomUUID() + ":";
    List<String> keys = new ArrayList<>();
    java.util.Map<String, AtomicLong> admittedPerKey = new java.util.concurrent.ConcurrentHashMap<>();
    for (int i = 0; i < 6; i++) {
      keys.add(prefix + i);
      admittedPerKey.put(prefix + i, new AtomicLong());
    }
    AtomicLong secondAdmitted = new AtomicLong();
    long[] remaining = new long[keys.size() + 1];
    long admitted = run(p.capacity(), keys, (limiter, key) -> {
      int i = keys.indexOf(key);
      List<String> set = List.of(key, keys.get((i + 1) % 6), keys.get((i + 3) % 6));
      List<dev.ratelimit.KeyedPolicy> checks = new ArrayList<>();
      for (String k : set) {
        checks.add(dev.ratelimit.KeyedPolicy.of(k, p));
      }
      checks.add(dev.ratelimit.KeyedPolicy.of(set.get(1), second));
      boolean allowed = (i % 2 == 0 ? limiter.checkAll(checks, 1)
          : limiter.checkAllAsync(checks, 1).toCompletableFuture().join()).allowed();
      if (allowed) {
        set.forEach(k -> admittedPerKey.get(k).incrementAndGet());
        secondAdmitted.incrementAndGet();
      }
      return allowed;
    }, limiter -> {
      for (int i = 0; i < keys.size(); i++) {
        remaining[i] = limiter.inspect(keys.get(i), p).remaining();
      }
      long secondLeft = 0;
      for (String k : keys) {
        secondLeft += limiter.inspect(k, second).remaining();
      }
      remaining[keys.size()] = secondLeft;
    });
    assertThat(admitted).isPositive();
    for (int i = 0; i < keys.size(); i++) {
      long consumed = 20 - remaining[i];
      long admittedHere = admittedPerKey.get(keys.get(i)).get();
      assertThat(admittedHere).as("key %s admitted within its limit", i).isLessThanOrEqualTo(20);
      if (atomicAcrossKeys()) {
        assertThat(consumed).as("key %s consumed by admitted calls only", i).isEqualTo(admittedHere);
      } else {
        assertThat(consumed).as("key %s consumed at least by admitted calls", i).isGreaterThanOrEqualTo(admittedHere);
      }
    }
    if (atomicAcrossKeys()) {
      assertThat(6 * 1_000 - remaining[keys.size()]).as("the second policy, consumed by admitted calls only")
          .isEqualTo(secondAdmitted.get());
    }
  }

  /** One call of a thread: whether it was admitted. */
  private interface Call {
    boolean admitted(RateLimiter limiter, String key);
  }

  /** Runs every thread of every instance over {@code keys} round-robin; returns the admitted count. */
  private long run(Policy p, List<String> keys) throws Exception {
    return run(p, keys, 1);
  }

  /** {@link #run(Policy, List)} with checks of {@code cost}. */
  private long run(Policy p, List<String> keys, long cost) throws Exception {
    return run(p.capacity(), keys, (limiter, key) -> limiter.check(key, p, cost).allowed(), limiter -> { });
  }

  /**
   * Runs {@code call} on every thread of every instance over {@code keys} round-robin, enough times
   * to go past {@code capacity} per key, then {@code after} on the first limiter; returns the
   * admitted count.
   */
  private long run(long capacity, List<String> keys, Call call, java.util.function.Consumer<RateLimiter> after)
      throws Exception {
    ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
    int instances = instances();
    List<RateLimiter> limiters = new ArrayList<>();
    List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
    for (int i = 0; i < instances; i++) {
      limiters.add(RateLimiterContract.correctnessLimiter(clock, newBackend(i), errors, null));
    }
    ExecutorService pool = Executors.newFixedThreadPool(THREADS * instances);
    try {
      AtomicLong admitted = new AtomicLong();
      AtomicLong denied = new AtomicLong();
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> futures = new ArrayList<>();
      int perThread = Math.max(checksPerThread(), (int) (2 * capacity * keys.size() / THREADS / instances));
      for (int i = 0; i < instances; i++) {
        RateLimiter limiter = limiters.get(i);
        for (int t = 0; t < THREADS; t++) {
          int offset = t + i * THREADS;
          futures.add(pool.submit(() -> {
            start.await();
            for (int n = 0; n < perThread; n++) {
              String key = keys.get((offset + n) % keys.size());
              if (call.admitted(limiter, key)) {
                admitted.incrementAndGet();
              } else {
                denied.incrementAndGet();
              }
            }
            return null;
          }));
        }
      }
      start.countDown();
      for (Future<?> f : futures) {
        f.get(2, TimeUnit.MINUTES);
      }
      assertThat(denied.get()).as("the run must go past the limit").isPositive();
      assertThat(errors).as("backend errors: a failure mode must not stand in for an answer").isEmpty();
      after.accept(limiters.get(0));
      return admitted.get();
    } finally {
      pool.shutdownNow();
      limiters.forEach(RateLimiter::close);
    }
  }
}

package dev.ratelimit.bench;

import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.redis.RedisBackend;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import org.redisson.api.RedissonClient;

/**
 * The cost of {@link RedisBackend.Builder#waitForReplicas waitForReplicas(1, 50 ms)}: checks/s and
 * p50/p99 latency of admitted checks with it and without it, alternating in the same run, on a
 * master and one replica this main starts on loopback, for each number of calling threads. Every
 * check is admitted (a key per check: the policy's 100 per minute never runs out), so every check
 * writes and, with the option, waits for the replica.
 *
 * <pre>{@code java -cp ratelimit-bench/target/benchmarks.jar dev.ratelimit.bench.WaitForReplicas [--threads 1,16] [--seconds 3] [--rounds 3]}</pre>
 */
public final class WaitForReplicas {
  private WaitForReplicas() {}

  public static void main(String[] args) throws Exception {
    int seconds = 3;
    int rounds = 3;
    int[] threads = {1, 16};
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--seconds" -> seconds = Integer.parseInt(args[i + 1]);
        case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
        case "--threads" -> threads = java.util.Arrays.stream(args[i + 1].split(",")).mapToInt(Integer::parseInt).toArray();
        default -> throw new IllegalArgumentException(
            "unknown option " + args[i] + "; use --threads N,M --seconds N --rounds N");
      }
    }
    Policy policy = Policy.of(100, Duration.ofMinutes(1));
    try (RedisServer master = RedisServer.start();
        RedisServer replica = RedisServer.builder().args("--replicaof", master.host(), Integer.toString(master.port()))
            .start()) {
      while (!replica.info("replication").contains("master_link_status:up")) {
        Thread.sleep(20);
      }
      RedissonClient redisson = BenchRedis.single(master.url());
      String prefix = BenchRedis.newPrefix();
      try (RateLimiter plain = RateLimiter.builder().nearCache(false)
              .backend(RedisBackend.builder(redisson).keyPrefix(prefix).build()).build();
          RateLimiter waiting = RateLimiter.builder().nearCache(false)
              .backend(RedisBackend.builder(redisson).keyPrefix(prefix)
                  .waitForReplicas(1, Duration.ofMillis(50)).build()).build()) {
        System.out.printf(Locale.ROOT, "master %s, replica %s; policy %s; every check admitted; sync check%n",
            master.url(), replica.url(), policy.name());
        System.out.println("| threads | round | without checks/s | p50 µs | p99 µs | waitForReplicas(1) checks/s | p50 µs | p99 µs |");
        System.out.println("|---|---|---|---|---|---|---|---|");
        AtomicLong keys = new AtomicLong();
        for (int t : threads) {
          run(plain, policy, t, 1, keys, new Histogram()); // warm-up
          run(waiting, policy, t, 1, keys, new Histogram());
          for (int r = 1; r <= rounds; r++) {
            Histogram a = new Histogram();
            double without = run(plain, policy, t, seconds, keys, a);
            Histogram b = new Histogram();
            double with = run(waiting, policy, t, seconds, keys, b);
            System.out.printf(Locale.ROOT, "| %d | %d | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f |%n", t, r, without,
                a.quantileMicros(0.5), a.quantileMicros(0.99), with, b.quantileMicros(0.5), b.quantileMicros(0.99));
          }
        }
      } finally {
        redisson.shutdown();
      }
    }
  }

  /** Checks/s of {@code threads} threads over {@code seconds}; fails if a check was not admitted by Redis. */
  private static double run(RateLimiter limiter, Policy policy, int threads, int seconds, AtomicLong keys,
      Histogram latency) throws InterruptedException {
    long end = System.nanoTime() + seconds * 1_000_000_000L;
    AtomicLong checks = new AtomicLong();
    List<Thread> workers = new ArrayList<>();
    List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
    long started = System.nanoTime();
    for (int i = 0; i < threads; i++) {
      Thread w = new Thread(() -> {
        try {
          while (System.nanoTime() < end) {
            long t0 = System.nanoTime();
            Decision d = limiter.check("k" + keys.incrementAndGet(), policy);
            latency.recordNanos(System.nanoTime() - t0);
            if (!d.allowed() || d.isDegraded()) {
              throw new IllegalStateException("a check was not admitted by Redis: " + d);
            }
            checks.incrementAndGet();
          }
        } catch (RuntimeException e) {
          failures.add(e);
        }
      });
      workers.add(w);
      w.start();
    }
    for (Thread w : workers) {
      w.join();
    }
    if (!failures.isEmpty()) {
      throw new IllegalStateException(failures.get(0));
    }
    return checks.get() * 1e9 / (System.nanoTime() - started);
  }
}

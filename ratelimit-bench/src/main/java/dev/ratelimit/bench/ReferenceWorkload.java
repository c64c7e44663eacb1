package dev.ratelimit.bench;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.spi.Backend;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * The reference workload: 200,000 checks round-robin over 1,000 keys, policy 100 per 60 s, a
 * manual clock advancing 0.5 ms per check from epoch second 1,700,000,000. Prints one row per
 * (backend, algorithm): allowed %, checks/s, p50 and p99 latency of one check in µs.
 */
public final class ReferenceWorkload {
  /** Checks per run. */
  public static final int CHECKS = 200_000;
  /** Distinct keys, visited round-robin. */
  public static final int KEYS = 1_000;
  /** The clock's step per check, µs. */
  public static final long STEP_MICROS = 500;

  private ReferenceWorkload() {}

  /** One row of the table. */
  public record Row(String backend, Algorithm algorithm, long allowed, double checksPerSecond,
      double p50Micros, double p99Micros) {
    /** Allowed checks as a percentage of all checks. */
    public double allowedPercent() {
      return 100.0 * allowed / CHECKS;
    }

    String format() {
      return String.format(Locale.ROOT, "| %-8s | %-14s | %9.2f | %12.0f | %7.2f | %7.2f |",
          backend, algorithm, allowedPercent(), checksPerSecond, p50Micros, p99Micros);
    }
  }

  /** Runs the workload once for one algorithm on a fresh backend. */
  public static Row run(String backendName, Supplier<Backend> backends, Algorithm algorithm) {
    String[] keys = new String[KEYS];
    for (int i = 0; i < KEYS; i++) {
      keys[i] = "user:" + i;
    }
    Policy policy = Policy.of(100, Duration.ofSeconds(60)).withAlgorithm(algorithm);
    ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
    long[] latencies = new long[CHECKS];
    long allowed = 0;
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(backends.get()).build()) {
      long started = System.nanoTime();
      for (int i = 0; i < CHECKS; i++) {
        long t0 = System.nanoTime();
        boolean ok = limiter.check(keys[i % KEYS], policy).allowed();
        latencies[i] = System.nanoTime() - t0;
        allowed += ok ? 1 : 0;
        clock.advanceMicros(STEP_MICROS);
      }
      long elapsed = System.nanoTime() - started;
      Arrays.sort(latencies);
      return new Row(backendName, algorithm, allowed, CHECKS * 1e9 / elapsed,
          latencies[CHECKS / 2] / 1e3, latencies[(int) (CHECKS * 0.99)] / 1e3);
    }
  }

  /** The table header. */
  public static String header() {
    return "| backend  | algorithm      | allowed % |     checks/s | p50 µs  | p99 µs  |\n"
        + "|----------|----------------|-----------|--------------|---------|---------|";
  }

  /** Prints the table for the in-memory backend; {@code --warmup N} runs N untimed rounds first. */
  public static void main(String[] args) {
    int warmup = 2;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--warmup") && i + 1 < args.length) {
        warmup = Integer.parseInt(args[++i]);
      }
    }
    for (int w = 0; w < warmup; w++) {
      for (Algorithm algorithm : Algorithm.values()) {
        run("memory", dev.ratelimit.memory.InMemoryBackend::create, algorithm);
      }
    }
    System.out.println(header());
    for (Algorithm algorithm : Algorithm.values()) {
      System.out.println(run("memory", dev.ratelimit.memory.InMemoryBackend::create, algorithm).format());
    }
  }
}

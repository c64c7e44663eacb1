package dev.ratelimit.bench;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.tck.redis.RedisCluster;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import org.redisson.api.RedissonClient;

/**
 * The reference workload: 200,000 checks round-robin over 1,000 keys, policy 100 per 60 s, a
 * manual clock advancing 0.5 ms per check from epoch second 1,700,000,000. Prints one row per
 * (backend, algorithm): allowed %, checks/s, p50 and p99 latency of one check in µs.
 *
 * <p>Besides the in-memory rows, the main prints the same workload on the Redis backend ({@code
 * RedisBackend.builder(redisson).keyPrefix(prefix).build()}, the same manual clock): on the server
 * given by {@code --redis redis://host:port}, under a key prefix of its own ({@code bench-<random>};
 * nothing is flushed, every key has a TTL), or else on a redis-server it starts and stops itself.
 * {@code --cluster} adds rows on a 3-master Redis Cluster it starts ({@code cluster}); {@code
 * --memory-only} skips Redis. The allowed counts of the Redis rows must equal the memory rows' for
 * every algorithm: the last line says whether they do, and the exit code is 1 when they do not.
 */
public final class ReferenceWorkload {
  /** Checks per run. */
  public static final int CHECKS = 200_000;
  /** Distinct keys, visited round-robin. */
  public static final int KEYS = 1_000;
  /** The clock's step per check, µs. */
  public static final long STEP_MICROS = 500;
  /** The clock's start. */
  public static final Instant START = Instant.ofEpochSecond(1_700_000_000L);

  private ReferenceWorkload() {}

  /** The shape of a run: how many checks over how many keys, the clock's step, the policy's numbers. */
  public record Workload(int checks, int keys, long stepMicros, long limit, Duration window) {
    /** The reference workload. */
    public static final Workload REFERENCE =
        new Workload(CHECKS, KEYS, STEP_MICROS, 100, Duration.ofSeconds(60));

    /** This workload with {@code checks} checks. */
    public Workload withChecks(int checks) {
      return new Workload(checks, keys, stepMicros, limit, window);
    }

    /** The policy of {@code algorithm} this workload checks. */
    public Policy policy(Algorithm algorithm) {
      return Policy.of(limit, window).withAlgorithm(algorithm);
    }
  }

  /**
   * One row of the table. {@code degraded} counts decisions the limiter's failure mode made because
   * the backend failed (each is an "allowed" that Redis never counted): any makes a Redis row wrong.
   * {@code clockLag} is the largest ratio, over the spans in which every key is visited once, of
   * the real time the span took to the manual clock's advance over it: above 1, real time ran
   * faster than the manual clock, and Redis, whose TTLs run on real time, may have dropped state
   * that the manual clock still needed.
   */
  public record Row(String backend, Algorithm algorithm, long allowed, long checks, long degraded,
      double clockLag, double checksPerSecond, double p50Micros, double p99Micros) {

    /** A row of the reference workload ({@value #CHECKS} checks) with no degraded decision. */
    public Row(String backend, Algorithm algorithm, long allowed, double checksPerSecond,
        double p50Micros, double p99Micros) {
      this(backend, algorithm, allowed, CHECKS, 0, 0, checksPerSecond, p50Micros, p99Micros);
    }

    /** Allowed checks as a percentage of all checks. */
    public double allowedPercent() {
      return 100.0 * allowed / checks;
    }

    String format() {
      return String.format(Locale.ROOT, "| %-8s | %-14s | %9.2f | %12.0f | %7.2f | %7.2f |",
          backend, algorithm, allowedPercent(), checksPerSecond, p50Micros, p99Micros);
    }
  }

  /** Runs the reference workload once for one algorithm on a fresh backend. */
  public static Row run(String backendName, Supplier<Backend> backends, Algorithm algorithm) {
    return run(Workload.REFERENCE, backendName, backends, algorithm);
  }

  /** Runs {@code workload} once for one algorithm on a fresh backend from {@code backends}. */
  public static Row run(Workload workload, String backendName, Supplier<Backend> backends,
      Algorithm algorithm) {
    return run(workload, backendName, backends, algorithm, RateLimiter.Builder.DEFAULT_TIMEOUT);
  }

  /**
   * {@link #run(Workload, String, Supplier, Algorithm)} with the limiter's {@code timeout}: a test
   * that asserts no decision was the failure mode's gives a busy machine time to answer.
   */
  public static Row run(Workload workload, String backendName, Supplier<Backend> backends,
      Algorithm algorithm, Duration timeout) {
    int checks = workload.checks();
    String[] keys = new String[workload.keys()];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = "user:" + i;
    }
    Policy policy = workload.policy(algorithm);
    ManualClock clock = ManualClock.at(START);
    long[] latencies = new long[checks];
    long allowed = 0;
    long degraded = 0;
    long slowestSpan = 0;
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(backends.get())
        .timeout(timeout).build()) {
      long started = System.nanoTime();
      long spanStart = started;
      for (int i = 0; i < checks; i++) {
        long t0 = System.nanoTime();
        if (i % keys.length == 0 && i > 0) {
          slowestSpan = Math.max(slowestSpan, t0 - spanStart);
          spanStart = t0;
        }
        Decision d = limiter.check(keys[i % keys.length], policy);
        latencies[i] = System.nanoTime() - t0;
        allowed += d.allowed() ? 1 : 0;
        degraded += d.isDegraded() ? 1 : 0;
        clock.advanceMicros(workload.stepMicros());
      }
      long elapsed = System.nanoTime() - started;
      slowestSpan = Math.max(slowestSpan, System.nanoTime() - spanStart);
      double clockLag = slowestSpan / (1e3 * workload.stepMicros() * Math.min(keys.length, checks));
      Arrays.sort(latencies);
      return new Row(backendName, algorithm, allowed, checks, degraded, clockLag,
          checks * 1e9 / elapsed,
          latencies[checks / 2] / 1e3, latencies[(int) (checks * 0.99)] / 1e3);
    }
  }

  /** The Redis rows' backends: {@code RedisBackend.builder(redisson).keyPrefix(prefix).build()}. */
  public static Supplier<Backend> redis(RedissonClient redisson, String prefix) {
    return BenchRedis.backends(redisson, prefix);
  }

  /**
   * What is wrong with {@code rows}: for every row that is not {@code memory}, a line when its
   * allowed count differs from the memory row of the same algorithm (and workload size), or when
   * it has degraded decisions. Empty when everything matches.
   */
  public static List<String> mismatches(List<Row> rows) {
    List<String> problems = new ArrayList<>();
    for (Row row : rows) {
      if (row.backend().equals("memory")) {
        continue;
      }
      Row memory = rows.stream()
          .filter(r -> r.backend().equals("memory") && r.algorithm() == row.algorithm()
              && r.checks() == row.checks())
          .findFirst().orElse(null);
      if (memory == null) {
        problems.add(String.format(Locale.ROOT, "%s %s: no memory row to compare with",
            row.backend(), row.algorithm()));
        continue;
      }
      if (row.allowed() != memory.allowed()) {
        problems.add(String.format(Locale.ROOT,
            "%s %s: allowed %d (%.3f %%) vs memory %d (%.3f %%): %+d checks (%+.3f points)",
            row.backend(), row.algorithm(), row.allowed(), row.allowedPercent(), memory.allowed(),
            memory.allowedPercent(), row.allowed() - memory.allowed(),
            row.allowedPercent() - memory.allowedPercent())
            + (row.clockLag() > 1 ? String.format(Locale.ROOT, "; real time outran the manual clock"
                + " (%.2fx in the slowest span), so Redis TTLs may have ended state early", row.clockLag())
                : String.format(Locale.ROOT, "; real time stayed behind the manual clock"
                + " (at most %.2fx), so no TTL ended early", row.clockLag())));
      }
      if (row.degraded() > 0) {
        problems.add(String.format(Locale.ROOT,
            "%s %s: %d decisions were the failure mode's (backend errors), not Redis's",
            row.backend(), row.algorithm(), row.degraded()));
      }
    }
    return problems;
  }

  /** The table header. */
  public static String header() {
    return "| backend  | algorithm      | allowed % |     checks/s | p50 µs  | p99 µs  |\n"
        + "|----------|----------------|-----------|--------------|---------|---------|";
  }

  /**
   * Prints the table. Options: {@code --warmup N} untimed in-memory rounds first (default 20: the
   * JIT compiles the six algorithms' paths in about that many);
   * {@code --redis redis://host:port} a server to use instead of starting one; {@code --cluster}
   * rows on a 3-master cluster too; {@code --memory-only} no Redis; {@code --redis-warmup N}
   * untimed checks per algorithm on each Redis target before its rows (default 10,000; 0: none).
   */
  public static void main(String[] args) {
    int warmup = 20;
    int redisWarmup = 10_000;
    String redisUrl = null;
    boolean cluster = false;
    boolean memoryOnly = false;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--warmup" -> warmup = Integer.parseInt(value(args, ++i));
        case "--redis-warmup" -> redisWarmup = Integer.parseInt(value(args, ++i));
        case "--redis" -> redisUrl = value(args, ++i);
        case "--cluster" -> cluster = true;
        case "--memory-only" -> memoryOnly = true;
        default -> {
          System.err.println("unknown option " + args[i] + "; options: --warmup N, --redis URL,"
              + " --cluster, --memory-only, --redis-warmup N");
          System.exit(2);
        }
      }
    }
    System.exit(run(warmup, redisWarmup, redisUrl, cluster, memoryOnly));
  }

  private static String value(String[] args, int i) {
    if (i >= args.length) {
      throw new IllegalArgumentException(args[i - 1] + " needs a value");
    }
    return args[i];
  }

  /** The main's work; returns the exit code. */
  private static int run(int warmup, int redisWarmup, String redisUrl, boolean cluster,
      boolean memoryOnly) {
    for (int w = 0; w < warmup; w++) {
      for (Algorithm algorithm : Algorithm.values()) {
        run("memory", InMemoryBackend::create, algorithm);
      }
    }
    // the memory rows are measured before any Redis server, cluster or client starts: their
    // threads (cluster gossip, topology scans, event loops) would share the 2 cores with them
    List<Row> rows = new ArrayList<>();
    for (Algorithm algorithm : Algorithm.values()) {
      rows.add(run("memory", InMemoryBackend::create, algorithm));
    }
    if (memoryOnly) {
      System.out.println(header());
      rows.forEach(row -> System.out.println(row.format()));
      return 0;
    }

    String prefix = BenchRedis.newPrefix();
    RedisServer owned = null;
    RedisCluster redisCluster = null;
    RedissonClient single = null;
    RedissonClient clustered = null;
    try {
      String url = redisUrl;
      if (url == null) {
        owned = RedisServer.start();
        url = owned.url();
      }
      System.out.println("redis:   " + url + (owned != null
          ? " (redis-server pid " + owned.pid() + ", started and stopped by this run)"
          : " (given; nothing is flushed, keys expire by their TTL)") + ", key prefix " + prefix);
      if (cluster) {
        redisCluster = RedisCluster.start(3);
        System.out.println("cluster: " + redisCluster.urls() + " (3 masters, started and stopped by"
            + " this run), key prefix " + prefix);
      }
      single = BenchRedis.single(url);
      if (cluster) {
        clustered = BenchRedis.cluster(redisCluster.urls());
      }
      Workload warm = Workload.REFERENCE.withChecks(Math.max(1, redisWarmup));
      System.out.println();
      System.out.println(header());
      rows.forEach(row -> System.out.println(row.format()));
      List<String> labels = new ArrayList<>(List.of("redis"));
      List<RedissonClient> clients = new ArrayList<>(List.of(single));
      if (cluster) {
        labels.add("cluster");
        clients.add(clustered);
      }
      for (int c = 0; c < clients.size(); c++) {
        RedissonClient client = clients.get(c);
        if (redisWarmup > 0) {
          for (Algorithm algorithm : Algorithm.values()) {
            run(warm, "warmup", redis(client, prefix + "w"), algorithm);
          }
        }
        for (Algorithm algorithm : Algorithm.values()) {
          Row row = run(labels.get(c), redis(client, prefix), algorithm);
          rows.add(row);
          System.out.println(row.format());
        }
      }
    } finally {
      BenchRedis.shutdown(single);
      BenchRedis.shutdown(clustered);
      if (redisCluster != null) {
        redisCluster.close();
      }
      if (owned != null) {
        owned.close();
      }
    }
    System.out.println();
    rows.stream().filter(r -> !r.backend().equals("memory")).mapToDouble(Row::clockLag).max()
        .ifPresent(lag -> System.out.printf(Locale.ROOT, "real time per manual-clock time, slowest"
            + " span of %d checks in the Redis rows: %.2fx (%s)%n", KEYS, lag, lag <= 1
            ? "below 1: Redis TTLs, which run on real time, never ended state the clock still needed"
            : "ABOVE 1: Redis TTLs run on real time and may have ended state early"));
    List<String> problems = mismatches(rows);
    long redisRows = rows.stream().filter(r -> !r.backend().equals("memory")).count();
    if (problems.isEmpty()) {
      System.out.println("allowed % match: yes, all " + redisRows
          + " Redis rows allowed exactly as many checks as the memory row of their algorithm");
      return 0;
    }
    System.out.println("allowed % match: NO, " + problems.size() + " problem(s):");
    problems.forEach(p -> System.out.println("  " + p));
    return 1;
  }
}

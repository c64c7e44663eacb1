package dev.ratelimit.bench;

import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.redis.RedisBackend;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.api.options.OptionalOptions;
import org.redisson.client.codec.StringCodec;

/**
 * Throughput and latency of {@code checkAsync} on the Redis backend, next to {@code redis-benchmark}
 * running the backend's own GCRA script on the same server.
 *
 * <p>On a redis-server it starts (and stops): the system clock, {@value #KEYS} keys round-robin,
 * the policy {@link #POLICY} (GCRA, 100 per 1 s with a burst of 10,000, so that every check of
 * both sides is allowed and takes the script's writing path). Ours keeps a fixed number of checks
 * in flight ({@code --inflight 1,64}): that many chains, each issuing its next {@code checkAsync}
 * when the previous completes, for {@code --seconds} (default 10) per round after {@code --warmup}
 * seconds (default 3), for {@code --rounds} rounds (default 3). redis-benchmark runs {@code EVALSHA}
 * of the same script text ({@link GcraScript}, loaded with {@code SCRIPT LOAD}) with {@code -c 64}
 * and {@code -P 1} / {@code -P 16}, {@code -r 1000} keys through {@code __rand_int__}, and {@code
 * -n} sized for about {@code --rb-seconds} (default 5). A second table compares the p50 of our sync
 * {@code check} with that of a bare {@code EVALSHA} of the same script through Redisson, both one
 * in flight.
 */
public final class RedisThroughput {
  /** Keys, visited round-robin (ours) or at random (redis-benchmark's {@code -r}). */
  public static final int KEYS = 1_000;
  /** GCRA, 100 per second, burst 10,000: every check of this benchmark is allowed. */
  public static final Policy POLICY = Policy.of(100, Duration.ofSeconds(1)).withBurst(10_000);

  private static final int RB_CLIENTS = 64;

  private RedisThroughput() {}

  /** One measurement of ours: checks completed in the window, per second, and latencies. */
  record Measured(int inflight, long checks, long allowed, long degraded, double perSecond,
      double p50Micros, double p99Micros) {}

  public static void main(String[] args) throws Exception {
    int[] inflight = {1, 64};
    double seconds = 10;
    double warmupSeconds = 3;
    int rounds = 3;
    double rbSeconds = 5;
    int samples = 20_000;
    for (int i = 0; i < args.length; i++) {
      String v = i + 1 < args.length ? args[i + 1] : null;
      switch (args[i]) {
        case "--inflight" -> inflight = Arrays.stream(v.split(",")).mapToInt(s -> Integer.parseInt(s.trim())).toArray();
        case "--seconds" -> seconds = Double.parseDouble(v);
        case "--warmup" -> warmupSeconds = Double.parseDouble(v);
        case "--rounds" -> rounds = Integer.parseInt(v);
        case "--rb-seconds" -> rbSeconds = Double.parseDouble(v);
        case "--samples" -> samples = Integer.parseInt(v);
        default -> {
          System.err.println("unknown option " + args[i] + "; options: --inflight 1,64 --seconds 10"
              + " --warmup 3 --rounds 3 --rb-seconds 5 --samples 20000");
          System.exit(2);
        }
      }
      i++;
    }
    if (inflight.length == 0 || rounds < 1 || seconds <= 0) {
      throw new IllegalArgumentException("need at least one --inflight value, one round, seconds > 0");
    }
    System.exit(run(inflight, seconds, warmupSeconds, rounds, rbSeconds, samples));
  }

  private static int run(int[] inflight, double seconds, double warmupSeconds, int rounds,
      double rbSeconds, int samples) throws Exception {
    String prefix = BenchRedis.newPrefix();
    String[] keys = new String[KEYS];
    for (int i = 0; i < KEYS; i++) {
      keys[i] = "user:" + i;
    }
    ExecutorService bounce = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "bench-bounce");
      t.setDaemon(true);
      return t;
    });
    RedisServer server = RedisServer.start();
    RedissonClient redisson = null;
    boolean ok = true;
    try {
      redisson = BenchRedis.single(server.url());
      String version = server.info("server").lines().filter(l -> l.startsWith("redis_version:"))
          .findFirst().orElse("redis_version:?").substring("redis_version:".length());
      RateLimiter limiter = RateLimiter.builder().clock(InstantSource.system())
          .backend(RedisBackend.builder(redisson).keyPrefix(prefix).build()).build();

      // the backend has loaded its scripts: the bench's copy of the GCRA script must be among them
      String text = GcraScript.text();
      String sha = GcraScript.sha1(text);
      Object exists = server.command("SCRIPT", "EXISTS", sha);
      boolean same = exists instanceof List<?> l && Long.valueOf(1).equals(l.get(0));
      Object loaded = server.command("SCRIPT", "LOAD", text);
      if (!sha.equals(loaded)) {
        throw new IllegalStateException("SCRIPT LOAD returned " + loaded + ", expected " + sha);
      }
      System.out.println("server: redis-server " + version + " at " + server.url() + " (pid "
          + server.pid() + ", started and stopped by this run), key prefix " + prefix);
      System.out.println("policy: " + POLICY + "; " + KEYS + " keys; our clock: InstantSource.system()");
      System.out.println("script: GCRA (RedisBackend.checkScript(GCRA)), sha " + sha
          + (same ? ", the same text the backend loaded" : ", NOT among the scripts the backend loaded"));
      ok &= same;

      RedisBenchmarkTool rb = RedisBenchmarkTool.find();
      if (rb == null) {
        System.out.println("redis-benchmark: not on PATH, its columns are skipped");
      }
      long[] rbRequests = {0, 0};
      int[] pipelines = {1, 16};

      // warm-up: ours at every in-flight count; redis-benchmark once per pipeline depth to size -n
      for (int k : inflight) {
        measure(limiter, keys, k, warmupSeconds / inflight.length, bounce);
      }
      if (rb != null) {
        for (int j = 0; j < pipelines.length; j++) {
          long n = 20_000L * pipelines[j];
          RedisBenchmarkTool.Result r = rbRun(rb, server, sha, prefix + "-rbw" + j, pipelines[j], n, null);
          rbRequests[j] = Math.max(10_000, Math.round(r.requestsPerSecond() * rbSeconds / 1000.0) * 1000);
          // every key must stay within the burst, so that all of redis-benchmark's checks are allowed
          rbRequests[j] = Math.min(rbRequests[j], (long) (POLICY.burst() * KEYS * 0.8));
        }
        List<String> example = rb.commandLine(server.host(), server.port(), RB_CLIENTS, 1,
            rbRequests[0], KEYS, evalsha(sha, prefix + "-rb<round>p1", Long.toString(nowMicros())));
        System.out.println("redis-benchmark: " + String.join(" ", example));
        System.out.println("                 -n " + rbRequests[0] + " at -P 1, -n " + rbRequests[1]
            + " at -P 16 (about " + rbSeconds + " s each, from a warm-up run); now is the time at launch");
      }
      System.out.println();

      // rounds
      List<Measured[]> ours = new ArrayList<>();
      List<double[]> theirs = new ArrayList<>();
      double[][] sync = new double[rounds][];
      StringBuilder notes = new StringBuilder();
      for (int round = 1; round <= rounds; round++) {
        Measured[] m = new Measured[inflight.length];
        for (int j = 0; j < inflight.length; j++) {
          m[j] = measure(limiter, keys, inflight[j], seconds, bounce);
          if (m[j].degraded() > 0) {
            notes.append(String.format(Locale.ROOT, "round %d, %d in flight: %d of %d checks were"
                + " degraded (the backend failed, most likely its %d ms timeout; FAIL_OPEN allowed them)%n",
                round, inflight[j], m[j].degraded(), m[j].checks(), RedisBackend.DEFAULT_TIMEOUT.toMillis()));
          }
        }
        ours.add(m);
        double[] rbRps = {Double.NaN, Double.NaN};
        if (rb != null) {
          for (int j = 0; j < pipelines.length; j++) {
            RedisBenchmarkTool.Result r = rbRun(rb, server, sha, prefix + "-rb" + round + "p" + pipelines[j],
                pipelines[j], rbRequests[j], notes);
            rbRps[j] = r.requestsPerSecond();
            if (r.errors()) {
              ok = false;
            }
          }
        }
        theirs.add(rbRps);
        sync[round - 1] = syncComparison(limiter, redisson, sha, prefix + "-bare" + round, keys, samples);
      }

      printThroughput(inflight, ours, theirs);
      System.out.println();
      printSync(sync, samples);
      long checks = ours.stream().flatMap(Arrays::stream).mapToLong(Measured::checks).sum();
      long allowed = ours.stream().flatMap(Arrays::stream).mapToLong(Measured::allowed).sum();
      long degraded = ours.stream().flatMap(Arrays::stream).mapToLong(Measured::degraded).sum();
      System.out.println();
      System.out.printf(Locale.ROOT, "ours: %d checks measured, %.2f %% allowed, %d degraded%n",
          checks, 100.0 * allowed / Math.max(1, checks), degraded);
      if (notes.length() > 0) {
        System.out.print(notes);
      }
      limiter.close();
    } finally {
      BenchRedis.shutdown(redisson);
      server.close();
      bounce.shutdownNow();
    }
    return ok ? 0 : 1;
  }

  /**
   * {@code inflight} chains of {@code checkAsync} for {@code seconds}: each chain issues its next
   * check when its previous one completes. Counts the checks that completed within the window.
   */
  static Measured measure(RateLimiter limiter, String[] keys, int inflight, double seconds,
      ExecutorService bounce) throws InterruptedException {
    Histogram histogram = new Histogram();
    AtomicLong next = new AtomicLong();
    AtomicLong completed = new AtomicLong();
    AtomicLong allowed = new AtomicLong();
    AtomicLong degraded = new AtomicLong();
    CountDownLatch finished = new CountDownLatch(inflight);
    long start = System.nanoTime();
    long end = start + (long) (seconds * 1e9);
    class Chain {
      void issue() {
        long t0 = System.nanoTime();
        if (t0 >= end) {
          finished.countDown();
          return;
        }
        String key = keys[(int) (next.getAndIncrement() % keys.length)];
        CompletableFuture<Decision> f = limiter.checkAsync(key, POLICY, 1).toCompletableFuture();
        if (f.isDone()) {
          bounce.execute(() -> done(t0, f.join()));
        } else {
          f.whenComplete((d, e) -> done(t0, d));
        }
      }

      void done(long t0, Decision d) {
        long t1 = System.nanoTime();
        if (t1 <= end) {
          histogram.recordNanos(t1 - t0);
          completed.incrementAndGet();
          if (d != null && d.allowed()) {
            allowed.incrementAndGet();
          }
          if (d == null || d.isDegraded()) {
            degraded.incrementAndGet();
          }
        }
        issue();
      }
    }
    for (int i = 0; i < inflight; i++) {
      new Chain().issue();
    }
    if (!finished.await((long) (seconds * 1000) + 30_000, TimeUnit.MILLISECONDS)) {
      throw new IllegalStateException("checks still in flight 30 s after the end of the window");
    }
    long n = completed.get();
    return new Measured(inflight, n, allowed.get(), degraded.get(), n / seconds,
        histogram.quantileMicros(0.50), histogram.quantileMicros(0.99));
  }

  /** redis-benchmark's command: EVALSHA of the GCRA script on one key of {@code -r 1000}. */
  private static List<String> evalsha(String sha, String keyPrefix, String now) {
    return List.of("EVALSHA", sha, "1", keyPrefix + ":{__rand_int__}:gcra",
        "gcra", now, "1", Long.toString(POLICY.windowMicros()), Long.toString(POLICY.limit()),
        Long.toString(POLICY.burst()), "1");
  }

  private static RedisBenchmarkTool.Result rbRun(RedisBenchmarkTool rb, RedisServer server,
      String sha, String keyPrefix, int pipeline, long requests, StringBuilder notes) {
    Map<String, Long> before = BenchRedis.commandCalls(server.info("commandstats"));
    Map<String, Long> failedBefore = BenchRedis.commandFailures(server.info("commandstats"));
    List<String> cmd = rb.commandLine(server.host(), server.port(), RB_CLIENTS, pipeline, requests,
        KEYS, evalsha(sha, keyPrefix, Long.toString(nowMicros())));
    RedisBenchmarkTool.Result r = rb.run(cmd);
    String info = server.info("commandstats");
    long ran = BenchRedis.commandCalls(info).getOrDefault("evalsha", 0L) - before.getOrDefault("evalsha", 0L);
    long failed = BenchRedis.commandFailures(info).getOrDefault("evalsha", 0L)
        - failedBefore.getOrDefault("evalsha", 0L);
    if (notes != null && (r.errors() || failed != 0 || ran < requests)) {
      notes.append(String.format(Locale.ROOT,
          "redis-benchmark -P %d: %d EVALSHA ran of %d requested, %d failed%s%n", pipeline, ran,
          requests, failed, r.errors() ? "; it reported error replies:\n" + r.output() : ""));
    }
    if (failed != 0 || ran < requests) {
      return new RedisBenchmarkTool.Result(r.requestsPerSecond(), r.p50Millis(), r.p99Millis(), true,
          r.output());
    }
    return r;
  }

  /**
   * Our sync {@code check} against a bare sync {@code EVALSHA} of the same script through
   * Redisson (same per-call options as the backend), both one in flight, alternating blocks of
   * 1,000. Returns {p50 ours, p50 bare, p99 ours, p99 bare} in µs.
   */
  static double[] syncComparison(RateLimiter limiter, RedissonClient redisson, String sha,
      String barePrefix, String[] keys, int samples) {
    RScript script = redisson.getScript(OptionalOptions.defaults()
        .codec(StringCodec.INSTANCE).retryAttempts(0).timeout(RedisBackend.DEFAULT_TIMEOUT));
    String[] bareKeys = new String[keys.length];
    for (int i = 0; i < keys.length; i++) {
      bareKeys[i] = barePrefix + ":{" + keys[i] + "}:gcra";
    }
    long window = POLICY.windowMicros();
    long limit = POLICY.limit();
    long burst = POLICY.burst();
    long[] ours = new long[samples];
    long[] bare = new long[samples];
    int warm = Math.min(samples, 5_000);
    int block = 1_000;
    for (int pass = 0; pass < 2; pass++) {
      int n = pass == 0 ? warm : samples;
      for (int from = 0; from < n; from += block) {
        int to = Math.min(n, from + block);
        for (int i = from; i < to; i++) {
          long t0 = System.nanoTime();
          limiter.check(keys[i % keys.length], POLICY);
          ours[i] = System.nanoTime() - t0;
        }
        for (int i = from; i < to; i++) {
          long t0 = System.nanoTime();
          List<Object> keyList = List.of(bareKeys[i % bareKeys.length]);
          script.evalSha(RScript.Mode.READ_WRITE, sha, RScript.ReturnType.LIST, keyList,
              "gcra", nowMicros(), 1L, window, limit, burst, "1");
          bare[i] = System.nanoTime() - t0;
        }
      }
    }
    Arrays.sort(ours);
    Arrays.sort(bare);
    return new double[] {ours[samples / 2] / 1e3, bare[samples / 2] / 1e3,
        ours[(int) (samples * 0.99)] / 1e3, bare[(int) (samples * 0.99)] / 1e3};
  }

  private static long nowMicros() {
    java.time.Instant now = InstantSource.system().instant();
    return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
  }

  private static void printThroughput(int[] inflight, List<Measured[]> ours, List<double[]> theirs) {
    int big = 0;
    for (int j = 0; j < inflight.length; j++) {
      if (inflight[j] > inflight[big]) {
        big = j;
      }
    }
    StringBuilder head = new StringBuilder("| round  ");
    StringBuilder rule = new StringBuilder("|--------");
    for (int k : inflight) {
      String label = "ours @" + k;
      head.append(String.format(Locale.ROOT, "| %12s | p50 µs  | p99 µs  ", label + " /s"));
      rule.append("|--------------|---------|---------");
    }
    head.append("| rb -P1 /s  | rb -P16 /s | ours@").append(inflight[big]).append("/rb-P1 |");
    rule.append("|------------|------------|").append("-".repeat(("ours@" + inflight[big] + "/rb-P1").length() + 2)).append("|");
    System.out.println(head);
    System.out.println(rule);
    int rounds = ours.size();
    int cols = inflight.length * 3 + 3;
    double[][] values = new double[rounds][cols];
    for (int r = 0; r < rounds; r++) {
      for (int j = 0; j < inflight.length; j++) {
        Measured m = ours.get(r)[j];
        values[r][3 * j] = m.perSecond();
        values[r][3 * j + 1] = m.p50Micros();
        values[r][3 * j + 2] = m.p99Micros();
      }
      int c = inflight.length * 3;
      values[r][c] = theirs.get(r)[0];
      values[r][c + 1] = theirs.get(r)[1];
      values[r][c + 2] = ours.get(r)[big].perSecond() / theirs.get(r)[0];
    }
    for (int r = 0; r < rounds; r++) {
      System.out.println(throughputRow(Integer.toString(r + 1), values[r], inflight, big));
    }
    double[] median = new double[cols];
    for (int c = 0; c < cols; c++) {
      double[] column = new double[rounds];
      for (int r = 0; r < rounds; r++) {
        column[r] = values[r][c];
      }
      median[c] = median(column);
    }
    System.out.println(throughputRow("median", median, inflight, big));
  }

  private static String throughputRow(String label, double[] v, int[] inflight, int big) {
    StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "| %-6s ", label));
    for (int j = 0; j < inflight.length; j++) {
      row.append(String.format(Locale.ROOT, "| %12.0f | %7.0f | %7.0f ", v[3 * j], v[3 * j + 1], v[3 * j + 2]));
    }
    int c = inflight.length * 3;
    String ratioLabel = "ours@" + inflight[big] + "/rb-P1";
    row.append(String.format(Locale.ROOT, "| %10s | %10s | %" + ratioLabel.length() + "s |",
        fmt(v[c], "%.0f"), fmt(v[c + 1], "%.0f"), fmt(v[c + 2], "%.2f")));
    return row.toString();
  }

  private static void printSync(double[][] sync, int samples) {
    System.out.println("sync, 1 in flight, " + samples + " samples each per round:");
    System.out.println("| round  | check p50 µs | bare EVALSHA p50 µs | p50 ratio | check p99 µs | bare p99 µs |");
    System.out.println("|--------|--------------|---------------------|-----------|--------------|-------------|");
    double[][] cols = new double[5][sync.length];
    for (int r = 0; r < sync.length; r++) {
      double[] s = sync[r];
      double[] row = {s[0], s[1], s[0] / s[1], s[2], s[3]};
      for (int c = 0; c < 5; c++) {
        cols[c][r] = row[c];
      }
      System.out.println(syncRow(Integer.toString(r + 1), row));
    }
    double[] med = new double[5];
    for (int c = 0; c < 5; c++) {
      med[c] = median(cols[c]);
    }
    System.out.println(syncRow("median", med));
  }

  private static String syncRow(String label, double[] v) {
    return String.format(Locale.ROOT, "| %-6s | %12.1f | %19.1f | %9.2f | %12.1f | %11.1f |",
        label, v[0], v[1], v[2], v[3], v[4]);
  }

  private static String fmt(double v, String format) {
    return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, format, v);
  }

  static double median(double[] values) {
    double[] s = values.clone();
    Arrays.sort(s);
    int n = s.length;
    return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  }
}

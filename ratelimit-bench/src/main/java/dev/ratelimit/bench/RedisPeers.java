package dev.ratelimit.bench;

import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.redis.RedisBackend;
import dev.ratelimit.tck.redis.RedisServer;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.distributed.AsyncBucketProxy;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.redisson.Bucket4jRedisson;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.redisson.Redisson;
import org.redisson.api.RRateLimiter;
import org.redisson.api.RScript;
import org.redisson.api.RateType;
import org.redisson.api.RedissonClient;
import org.redisson.api.options.OptionalOptions;
import org.redisson.client.codec.StringCodec;

/**
 * Our Redis backend side by side with its peers, in one run, on one redis-server this run starts
 * (and stops), on the same workload: {@value #KEYS} keys round-robin, {@code --limit} per {@code
 * --window} seconds (default 100 per 60 s, burst = limit), the real clock, checks of cost 1 kept
 * {@code --inflight} at a time (async chains: each issues its next check when its previous one
 * completes).
 *
 * <p>Rows, each round: ours (near-cache off, so every check goes to Redis; batching on, the
 * default), ours with batching off, ours with the near-cache (the default limiter); Bucket4j 8 over
 * Redisson ({@code Bucket4jRedisson.casBasedBuilder(((Redisson) client).getCommandExecutor())},
 * async, greedy refill, capacity = burst); Redisson's {@code RRateLimiter} ({@code trySetRate(OVERALL,
 * limit, window)} once per key, then {@code tryAcquireAsync()}); a minimal GCRA script ({@code
 * minimal_gcra.lua}) by {@code EVALSHA} through Redisson with our backend's per-call options; all at
 * 64 in flight, and ours and the bare script at 1 in flight; the front doors' shape, ours (a blocking
 * {@code checkAll} of one policy) and Bucket4j's (its blocking {@code tryConsume}), each on 64 caller
 * threads; then {@code redis-benchmark -c 64}
 * running {@code EVALSHA} of the minimal script at {@code -P 1} and {@code -P 16}. Every row uses
 * keys of its own, fresh each round. The server's {@code INFO cpu} and {@code INFO commandstats}
 * are read before and after each row: server CPU µs per check is the redis-server process's user +
 * system CPU time over the checks the row sent; script µs per check is the {@code EVAL}/{@code
 * EVALSHA} time Redis measured (commands the scripts call included) over the same checks; script
 * calls per check is below 1 when checks were batched.
 */
public final class RedisPeers {
  static final int KEYS = 1_000;
  private static final int WIDE = 64;
  /**
   * Our limiter's and backend's timeout here: Redisson's, as the peers get (BenchRedis), so that a
   * slow moment of this shared machine is measured as latency, not turned into failure-mode answers.
   */
  private static final Duration TIMEOUT = Duration.ofSeconds(3);
  /** The row of the front doors' shape: blocking checkAll of one policy, one caller thread each. */
  private static final String FRONT_DOOR = "ours, blocking checkAll of 1";
  /** Bucket4j + Redisson in the same shape: a blocking tryConsume, one caller thread each. */
  private static final String BUCKET4J_BLOCKING = "Bucket4j + Redisson, blocking";

  private RedisPeers() {}

  /** One row of one round. */
  record Row(String name, int inflight, long checks, long allowed, long failed, double perSecond,
      double p50Micros, double p99Micros, double serverMicrosPerCheck, double scriptMicrosPerCheck,
      double scriptCallsPerCheck) {}

  /** A check of key number {@code i}: whether it was allowed; null or an error when it failed. */
  interface Source {
    CompletionStage<Boolean> check(int i);
  }

  public static void main(String[] args) throws Exception {
    double seconds = 5;
    double warmup = 2;
    int rounds = 3;
    double rbSeconds = 3;
    long limit = 100;
    long windowSeconds = 60;
    int[] variants = {};
    for (int i = 0; i < args.length; i += 2) {
      String v = i + 1 < args.length ? args[i + 1] : "";
      switch (args[i]) {
        case "--seconds" -> seconds = Double.parseDouble(v);
        case "--warmup" -> warmup = Double.parseDouble(v);
        case "--rounds" -> rounds = Integer.parseInt(v);
        case "--rb-seconds" -> rbSeconds = Double.parseDouble(v);
        case "--limit" -> limit = Long.parseLong(v);
        case "--window" -> windowSeconds = Long.parseLong(v);
        case "--variants" -> variants = java.util.Arrays.stream(v.split(",")).mapToInt(Integer::parseInt).toArray();
        default -> {
          System.err.println("unknown option " + args[i] + "; options: --seconds 5 --warmup 2 --rounds 3"
              + " --rb-seconds 3 --limit 100 --window 60 [--variants 1,4: extra rows of ours with that"
              + " many calls in flight before checks batch]");
          System.exit(2);
        }
      }
    }
    System.exit(run(seconds, warmup, rounds, rbSeconds, Policy.of(limit, Duration.ofSeconds(windowSeconds)), variants));
  }

  private static int run(double seconds, double warmup, int rounds, double rbSeconds, Policy policy,
      int[] variants) throws Exception {
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
      String prefix = BenchRedis.newPrefix();
      String version = server.info("server").lines().filter(l -> l.startsWith("redis_version:"))
          .findFirst().orElse("redis_version:?").substring("redis_version:".length());
      String minimal = resource("minimal_gcra.lua");
      String sha = (String) server.command("SCRIPT", "LOAD", minimal);
      long t = policy.windowMicros() / policy.limit();
      long tau = policy.burst() * t;
      RScript script = redisson.getScript(OptionalOptions.defaults().codec(StringCodec.INSTANCE)
          .retryAttempts(0).timeout(RedisBackend.DEFAULT_TIMEOUT));
      ProxyManager<String> bucket4j = Bucket4jRedisson.casBasedBuilder(((Redisson) redisson).getCommandExecutor())
          .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10)))
          .build();
      BucketConfiguration bucketConfig = BucketConfiguration.builder()
          .addLimit(limit -> limit.capacity(policy.burst()).refillGreedy(policy.limit(), policy.window()))
          .build();

      RateLimiter ours = limiter(redisson, prefix + "-ours", true, false);
      RateLimiter unbatched = limiter(redisson, prefix + "-unb", false, false);
      RateLimiter nearCache = limiter(redisson, prefix + "-nc", true, true);
      RateLimiter frontDoor = limiter(redisson, prefix + "-fd", true, false);
      // what the filter and the aspect do: a blocking checkAll of one policy on a container's thread
      ExecutorService callers = Executors.newFixedThreadPool(WIDE, r -> {
        Thread thread = new Thread(r, "bench-caller");
        thread.setDaemon(true);
        return thread;
      });

      System.out.println("server: redis-server " + version + " at " + server.url() + " (pid " + server.pid()
          + ", started and stopped by this run), key prefix " + prefix + ", " + Runtime.getRuntime()
          .availableProcessors() + " cores shared by client and server");
      System.out.println("workload: " + KEYS + " keys round-robin, " + policy.limit() + " per "
          + policy.window().toSeconds() + " s (burst " + policy.burst() + "), cost 1, real clock;"
          + " minimal GCRA sha " + sha + " (T " + t + " µs, tau " + tau + " µs)");
      System.out.println("ours: RedisBackend.builder(redisson), timeouts " + TIMEOUT.toMillis() + " ms (as Redisson's),"
          + " other defaults (batching on: max batch "
          + RedisBackend.DEFAULT_MAX_BATCH + ", " + RedisBackend.DEFAULT_BATCHES_IN_FLIGHT
          + " calls in flight before checks batch), limiter nearCache(false) unless noted");
      RedisBenchmarkTool rb = RedisBenchmarkTool.find();
      System.out.println();

      Map<String, Function<String, Source>> rows = new LinkedHashMap<>();
      rows.put("ours", p -> fromLimiter(ours, policy, keys(p)));
      rows.put("ours, batching off", p -> fromLimiter(unbatched, policy, keys(p)));
      rows.put("ours + near-cache", p -> fromLimiter(nearCache, policy, keys(p)));
      rows.put(FRONT_DOOR, p -> {
        String[] keys = keys(p);
        List<Policy> one = List.of(policy);
        return i -> CompletableFuture.supplyAsync(() -> {
          Decision d = frontDoor.checkAll(keys[i], one, 1).decisions().get(0);
          return d.isDegraded() ? null : d.allowed();
        }, callers);
      });
      rows.put("Bucket4j + Redisson", p -> {
        List<AsyncBucketProxy> buckets = new ArrayList<>();
        for (String key : keys(p)) {
          buckets.add(bucket4j.asAsync().builder().build(key, () -> CompletableFuture.completedFuture(bucketConfig)));
        }
        return i -> buckets.get(i).tryConsume(1);
      });
      // Bucket4j in the front doors' shape: its blocking tryConsume on the same caller threads, as
      // a servlet filter calls it (bucket4j-spring-boot-starter's does)
      rows.put(BUCKET4J_BLOCKING, p -> {
        List<Bucket> buckets = new ArrayList<>();
        for (String key : keys(p)) {
          buckets.add(bucket4j.builder().build(key, () -> bucketConfig));
        }
        return i -> CompletableFuture.supplyAsync(() -> buckets.get(i).tryConsume(1), callers);
      });
      RedissonClient client = redisson;
      rows.put("Redisson RRateLimiter", p -> {
        List<RRateLimiter> limiters = new ArrayList<>();
        for (String key : keys(p)) {
          RRateLimiter r = client.getRateLimiter(key);
          r.trySetRate(RateType.OVERALL, policy.limit(), policy.window());
          limiters.add(r);
        }
        return i -> limiters.get(i).tryAcquireAsync();
      });
      rows.put("minimal GCRA EVALSHA", p -> {
        List<Object>[] keyLists = keyLists(keys(p));
        return i -> script.<List<Object>>evalShaAsync(RScript.Mode.READ_WRITE, sha, RScript.ReturnType.LIST,
            keyLists[i], nowMicros(), t, tau, 1L).thenApply(r -> Long.valueOf(1).equals(r.get(0)));
      });
      List<String[]> plan = new ArrayList<>(List.of(
          new String[] {"ours", "64"}, new String[] {"ours, batching off", "64"},
          new String[] {"ours + near-cache", "64"}, new String[] {"Bucket4j + Redisson", "64"},
          new String[] {"Redisson RRateLimiter", "64"}, new String[] {"minimal GCRA EVALSHA", "64"},
          new String[] {"ours", "1"}, new String[] {"minimal GCRA EVALSHA", "1"},
          new String[] {FRONT_DOOR, "64"}, new String[] {BUCKET4J_BLOCKING, "64"})); // at 1 caller: the interleaved table
      for (int k : variants) {
        String name = "ours, " + k + " calls in flight";
        RateLimiter variant = RateLimiter.builder().clock(InstantSource.system()).nearCache(false).timeout(TIMEOUT)
            .backend(RedisBackend.builder(redisson).keyPrefix(prefix + "-v" + k).timeout(TIMEOUT)
                .batchesInFlight(k).build()).build();
        rows.put(name, p -> fromLimiter(variant, policy, keys(p)));
        plan.add(1, new String[] {name, "64"});
      }

      // warm-up: every row once, on keys of its own
      for (String[] step : plan) {
        drive(step[0], rows.get(step[0]).apply(prefix + "-w" + step[0].hashCode() + step[1]),
            Integer.parseInt(step[1]), warmup / 2, server, bounce);
      }
      long[] rbRequests = new long[2];
      int[] pipelines = {1, 16};
      if (rb != null) {
        for (int j = 0; j < 2; j++) {
          RedisBenchmarkTool.Result r = rb.run(rbCommand(rb, server, sha, prefix + "-rbw" + j, pipelines[j],
              20_000L * pipelines[j], t, tau));
          rbRequests[j] = Math.max(10_000, Math.round(r.requestsPerSecond() * rbSeconds / 1000.0) * 1000);
        }
        System.out.println("redis-benchmark: " + String.join(" ", rbCommand(rb, server, sha, prefix + "-rb<round>p1",
            1, rbRequests[0], t, tau)) + "  (-n " + rbRequests[1] + " at -P 16; now fixed at launch)");
      } else {
        System.out.println("redis-benchmark: not on PATH, its rows are skipped");
      }
      System.out.println();

      List<List<Row>> all = new ArrayList<>();
      List<double[]> interleaved = new ArrayList<>();
      for (int round = 1; round <= rounds; round++) {
        List<Row> result = new ArrayList<>();
        for (String[] step : plan) {
          String p = prefix + "-r" + round + "-" + Integer.toHexString(step[0].hashCode()) + "-" + step[1];
          result.add(drive(step[0], rows.get(step[0]).apply(p), Integer.parseInt(step[1]), seconds, server, bounce));
        }
        if (rb != null) {
          for (int j = 0; j < 2; j++) {
            Map<String, String[]> before = commandstats(server);
            double cpuBefore = cpu(server);
            RedisBenchmarkTool.Result r = rb.run(rbCommand(rb, server, sha, prefix + "-rb" + round + "p" + pipelines[j],
                pipelines[j], rbRequests[j], t, tau));
            double cpuAfter = cpu(server);
            Map<String, String[]> after = commandstats(server);
            ok &= !r.errors();
            long n = rbRequests[j];
            result.add(new Row("redis-benchmark -c 64 -P " + pipelines[j], WIDE, n, -1, r.errors() ? 1 : 0,
                r.requestsPerSecond(), r.p50Millis() * 1000, r.p99Millis() * 1000, (cpuAfter - cpuBefore) / n,
                (usec(after) - usec(before)) / n, (double) (calls(after) - calls(before)) / n));
          }
        }
        all.add(result);
        printRound(round, result);
        interleaved.add(interleaved(ours, frontDoor, policy, keys(prefix + "-s" + round), keys(prefix + "-sfd" + round),
            script, sha, t, tau, 10_000));
      }
      printMedians(all);
      printInterleaved(interleaved);
      ours.close();
      unbatched.close();
      nearCache.close();
      frontDoor.close();
      callers.shutdownNow();
    } finally {
      BenchRedis.shutdown(redisson);
      server.close();
      bounce.shutdownNow();
    }
    return ok ? 0 : 1;
  }

  /**
   * One in flight, sync, interleaved so that the three sides see the same moments of this shared
   * machine: blocks of 500 of our {@code check}, of a blocking {@code checkAll} of one policy (the
   * front doors' shape, on the caller's own thread as a container's thread calls it) and of bare
   * {@code EVALSHA}s of the minimal script through Redisson; the side that goes first rotates from
   * block to block (the first block measured faster in a probe, whichever side it was), {@code
   * samples} each after a warm-up. Returns {p50 check, p50 checkAll, p50 bare, p99 check, p99
   * checkAll, p99 bare} in µs.
   */
  private static double[] interleaved(RateLimiter limiter, RateLimiter frontDoor, Policy policy, String[] keys,
      String[] frontDoorKeys, RScript script, String sha, long t, long tau, int samples) {
    List<Object>[] bareKeys = keyLists(keys);
    List<Policy> one = List.of(policy);
    long[][] nanos = new long[3][samples];
    for (int pass = 0; pass < 2; pass++) {
      int n = pass == 0 ? samples / 4 : samples;
      for (int from = 0; from < n; from += 500) {
        int to = Math.min(n, from + 500);
        int first = (from / 500) % 3; // rotate which side goes first: no order bias
        for (int k = 0; k < 3; k++) {
          int side = (first + k) % 3;
          long[] into = nanos[side];
          for (int i = from; i < to; i++) {
            long t0 = System.nanoTime();
            switch (side) {
              case 0 -> limiter.check(keys[i % KEYS], policy);
              case 1 -> frontDoor.checkAll(frontDoorKeys[i % KEYS], one, 1);
              default -> script.evalSha(RScript.Mode.READ_WRITE, sha, RScript.ReturnType.LIST, bareKeys[i % KEYS],
                  nowMicros(), t, tau, 1L);
            }
            into[i] = System.nanoTime() - t0;
          }
        }
      }
    }
    double[] result = new double[6];
    for (int side = 0; side < 3; side++) {
      java.util.Arrays.sort(nanos[side]);
      result[side] = nanos[side][samples / 2] / 1e3;
      result[3 + side] = nanos[side][samples * 99 / 100] / 1e3;
    }
    return result;
  }

  private static void printInterleaved(List<double[]> rounds) {
    System.out.println();
    System.out.println("1 in flight, sync, interleaved blocks of 500, rotating which goes first"
        + " (check: limiter.check; checkAll: a blocking checkAll of one policy on the caller's thread, the front"
        + " doors' shape; near-cache off; bare: RScript.evalSha of the minimal GCRA script), 10,000 each per round:");
    System.out.println("| round  | check p50 µs | checkAll p50 µs | bare p50 µs | check/bare p50 | checkAll/bare p50"
        + " (target ≤ 1.1) | check p99 µs | checkAll p99 µs | bare p99 µs |");
    System.out.println("|--------|--------------|-----------------|-------------|----------------|-------------------"
        + "----------|--------------|-----------------|-------------|");
    double[][] cols = new double[8][rounds.size()];
    for (int r = 0; r < rounds.size(); r++) {
      double[] v = rounds.get(r);
      double[] row = {v[0], v[1], v[2], v[0] / v[2], v[1] / v[2], v[3], v[4], v[5]};
      for (int c = 0; c < 8; c++) {
        cols[c][r] = row[c];
      }
      printInterleavedRow(Integer.toString(r + 1), row);
    }
    double[] medians = new double[8];
    for (int c = 0; c < 8; c++) {
      medians[c] = RedisThroughput.median(cols[c]);
    }
    printInterleavedRow("median", medians);
  }

  private static void printInterleavedRow(String label, double[] v) {
    System.out.printf(Locale.ROOT, "| %-6s | %12.1f | %15.1f | %11.1f | %14.2f | %28.2f | %12.1f | %15.1f | %11.1f |%n",
        label, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
  }

  private static RateLimiter limiter(RedissonClient redisson, String prefix, boolean batching, boolean nearCache) {
    return RateLimiter.builder().clock(InstantSource.system()).nearCache(nearCache).timeout(TIMEOUT)
        .backend(RedisBackend.builder(redisson).keyPrefix(prefix).batching(batching).timeout(TIMEOUT).build())
        .build();
  }

  private static Source fromLimiter(RateLimiter limiter, Policy policy, String[] keys) {
    return i -> limiter.checkAsync(keys[i], policy, 1).thenApply(d -> d.isDegraded() ? null : d.allowed());
  }

  private static String[] keys(String prefix) {
    String[] keys = new String[KEYS];
    for (int i = 0; i < KEYS; i++) {
      keys[i] = prefix + ":user:" + i;
    }
    return keys;
  }

  @SuppressWarnings("unchecked")
  private static List<Object>[] keyLists(String[] keys) {
    List<Object>[] lists = new List[keys.length];
    for (int i = 0; i < keys.length; i++) {
      lists[i] = List.of("{" + keys[i] + "}:gcra");
    }
    return lists;
  }

  private static List<String> rbCommand(RedisBenchmarkTool rb, RedisServer server, String sha, String keyPrefix,
      int pipeline, long requests, long t, long tau) {
    return rb.commandLine(server.host(), server.port(), WIDE, pipeline, requests, KEYS,
        List.of("EVALSHA", sha, "1", keyPrefix + ":{__rand_int__}:gcra", Long.toString(nowMicros()),
            Long.toString(t), Long.toString(tau), "1"));
  }

  /** {@code inflight} chains of checks for {@code seconds}; counts what completed in the window. */
  static Row drive(String name, Source source, int inflight, double seconds, RedisServer server,
      ExecutorService bounce) throws InterruptedException {
    Histogram histogram = new Histogram();
    AtomicLong next = new AtomicLong();
    AtomicLong completed = new AtomicLong();
    AtomicLong allowed = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    CountDownLatch finished = new CountDownLatch(inflight);
    Map<String, String[]> before = commandstats(server);
    double cpuBefore = cpu(server);
    long start = System.nanoTime();
    long end = start + (long) (seconds * 1e9);
    class Chain {
      void issue() {
        long t0 = System.nanoTime();
        if (t0 >= end) {
          finished.countDown();
          return;
        }
        CompletableFuture<Boolean> f;
        try {
          f = source.check((int) (next.getAndIncrement() % KEYS)).toCompletableFuture();
        } catch (RuntimeException e) {
          f = CompletableFuture.failedFuture(e);
        }
        if (f.isDone()) {
          CompletableFuture<Boolean> done = f;
          bounce.execute(() -> done(t0, done.isCompletedExceptionally() ? null : done.join()));
        } else {
          f.whenComplete((a, e) -> done(t0, e != null ? null : a));
        }
      }

      void done(long t0, Boolean a) {
        long t1 = System.nanoTime();
        if (t1 <= end) {
          histogram.recordNanos(t1 - t0);
          completed.incrementAndGet();
          if (a == null) {
            failed.incrementAndGet();
          } else if (a) {
            allowed.incrementAndGet();
          }
        }
        issue();
      }
    }
    for (int i = 0; i < inflight; i++) {
      new Chain().issue();
    }
    if (!finished.await((long) (seconds * 1000) + 30_000, TimeUnit.MILLISECONDS)) {
      throw new IllegalStateException(name + ": checks still in flight 30 s after the end of the window");
    }
    double cpuAfter = cpu(server);
    Map<String, String[]> after = commandstats(server);
    long issued = next.get();
    long n = completed.get();
    return new Row(name, inflight, n, allowed.get(), failed.get(), n / seconds, histogram.quantileMicros(0.50),
        histogram.quantileMicros(0.99), (cpuAfter - cpuBefore) / issued, (usec(after) - usec(before)) / issued,
        (double) (calls(after) - calls(before)) / issued);
  }

  /** The redis-server process's CPU time so far, user + system, in µs. */
  private static double cpu(RedisServer server) {
    double seconds = 0;
    for (String line : server.info("cpu").split("\r?\n")) {
      if (line.startsWith("used_cpu_user:") || line.startsWith("used_cpu_sys:")) {
        seconds += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
      }
    }
    return seconds * 1e6;
  }

  /** cmdstat name -> {calls, usec} of the script commands (EVAL, EVALSHA). */
  private static Map<String, String[]> commandstats(RedisServer server) {
    Map<String, String[]> stats = new LinkedHashMap<>();
    for (String line : server.info("commandstats").split("\r?\n")) {
      if (!line.startsWith("cmdstat_eval")) {
        continue;
      }
      int colon = line.indexOf(':');
      String calls = null;
      String usec = null;
      for (String field : line.substring(colon + 1).split(",")) {
        if (field.startsWith("calls=")) {
          calls = field.substring(6);
        } else if (field.startsWith("usec=")) {
          usec = field.substring(5);
        }
      }
      stats.put(line.substring(8, colon), new String[] {calls, usec});
    }
    return stats;
  }

  private static double usec(Map<String, String[]> stats) {
    return stats.values().stream().mapToDouble(s -> Double.parseDouble(s[1])).sum();
  }

  private static long calls(Map<String, String[]> stats) {
    return stats.values().stream().mapToLong(s -> Long.parseLong(s[0])).sum();
  }

  private static void printRound(int round, List<Row> rows) {
    System.out.println("round " + round + ":");
    System.out.println("| row                          | in flight |   checks/s | p50 µs  | p99 µs  | allowed % | failed | server CPU µs/check | script µs/check | script calls/check |");
    System.out.println("|------------------------------|-----------|------------|---------|---------|-----------|--------|---------------------|-----------------|--------------------|");
    for (Row r : rows) {
      System.out.printf(Locale.ROOT, "| %-28s | %9d | %10.0f | %7.0f | %7.0f | %9s | %6d | %19.2f | %15.2f | %18.3f |%n",
          r.name(), r.inflight(), r.perSecond(), r.p50Micros(), r.p99Micros(),
          r.allowed() < 0 ? "n/a" : String.format(Locale.ROOT, "%.1f", 100.0 * r.allowed() / Math.max(1, r.checks())),
          r.failed(), r.serverMicrosPerCheck(), r.scriptMicrosPerCheck(), r.scriptCallsPerCheck());
    }
    System.out.println();
  }

  private static Row find(List<Row> rows, String name, int inflight) {
    return rows.stream().filter(r -> r.name().equals(name) && r.inflight() == inflight).findFirst().orElse(null);
  }

  private static void printMedians(List<List<Row>> all) {
    System.out.println("medians over " + all.size() + " rounds:");
    System.out.println("| row                          | in flight |   checks/s | p50 µs  | p99 µs  | server CPU µs/check | script µs/check |");
    System.out.println("|------------------------------|-----------|------------|---------|---------|---------------------|-----------------|");
    for (Row first : all.get(0)) {
      List<Row> same = all.stream().map(rows -> find(rows, first.name(), first.inflight())).toList();
      System.out.printf(Locale.ROOT, "| %-28s | %9d | %10.0f | %7.0f | %7.0f | %19.2f | %15.2f |%n", first.name(),
          first.inflight(), median(same, Row::perSecond), median(same, Row::p50Micros), median(same, Row::p99Micros),
          median(same, Row::serverMicrosPerCheck), median(same, Row::scriptMicrosPerCheck));
    }
    System.out.println();
    String[][] ratios = {
        {"ours@64 / Bucket4j+Redisson@64 (checks/s)", "≥ 2.0"},
        {"ours@64 / RRateLimiter@64 (checks/s)", "≥ 2.0"},
        {"ours@64 / redis-benchmark -P 1 (checks/s)", "≥ 1.0"},
        {"ours@64 / redis-benchmark -P 16 (checks/s)", ""},
        {"ours@64 / ours batching off@64 (checks/s)", ""},
        {"ours@64 p99 / Bucket4j+Redisson@64 p99", "≤ 1.0"},
        {"ours@64 p99 / RRateLimiter@64 p99", "≤ 1.0"},
        {"ours@1 p50 / minimal GCRA EVALSHA@1 p50", "≤ 1.1"},
        {"ours server CPU/check / minimal GCRA's (@64)", ""},
        {"ours script µs/check / minimal GCRA's (@1)", ""},
        {"front door@64 / Bucket4j+Redisson@64 (checks/s)", "≥ 2.0"},
        {"front door@64 / RRateLimiter@64 (checks/s)", "≥ 2.0"},
        {"front door@64 / redis-benchmark -P 1 (checks/s)", "≥ 1.0"},
        {"front door server CPU/check / minimal GCRA's", "≤ 1.1"},
        {"front door@64 / Bucket4j+Redisson blocking@64", ""}};
    double[][] values = new double[ratios.length][all.size()];
    for (int r = 0; r < all.size(); r++) {
      List<Row> rows = all.get(r);
      Row ours = find(rows, "ours", 64);
      Row ours1 = find(rows, "ours", 1);
      Row bare = find(rows, "minimal GCRA EVALSHA", 64);
      Row bare1 = find(rows, "minimal GCRA EVALSHA", 1);
      Row b4j = find(rows, "Bucket4j + Redisson", 64);
      Row rrl = find(rows, "Redisson RRateLimiter", 64);
      Row rb1 = find(rows, "redis-benchmark -c 64 -P 1", 64);
      Row rb16 = find(rows, "redis-benchmark -c 64 -P 16", 64);
      Row off = find(rows, "ours, batching off", 64);
      values[0][r] = ours.perSecond() / b4j.perSecond();
      values[1][r] = ours.perSecond() / rrl.perSecond();
      values[2][r] = rb1 == null ? Double.NaN : ours.perSecond() / rb1.perSecond();
      values[3][r] = rb16 == null ? Double.NaN : ours.perSecond() / rb16.perSecond();
      values[4][r] = ours.perSecond() / off.perSecond();
      values[5][r] = ours.p99Micros() / b4j.p99Micros();
      values[6][r] = ours.p99Micros() / rrl.p99Micros();
      values[7][r] = ours1.p50Micros() / bare1.p50Micros();
      values[8][r] = ours.serverMicrosPerCheck() / bare.serverMicrosPerCheck();
      values[9][r] = ours1.scriptMicrosPerCheck() / bare1.scriptMicrosPerCheck();
      Row door = find(rows, FRONT_DOOR, 64);
      values[10][r] = door.perSecond() / b4j.perSecond();
      values[11][r] = door.perSecond() / rrl.perSecond();
      values[12][r] = rb1 == null ? Double.NaN : door.perSecond() / rb1.perSecond();
      values[13][r] = door.serverMicrosPerCheck() / bare.serverMicrosPerCheck();
      values[14][r] = door.perSecond() / find(rows, BUCKET4J_BLOCKING, 64).perSecond();
    }
    StringBuilder head = new StringBuilder("| ratio                                            | target |");
    StringBuilder rule = new StringBuilder("|--------------------------------------------------|--------|");
    for (int r = 0; r < all.size(); r++) {
      head.append(String.format(Locale.ROOT, " round %d |", r + 1));
      rule.append("---------|");
    }
    System.out.println(head.append(" median |"));
    System.out.println(rule.append("--------|"));
    for (int i = 0; i < ratios.length; i++) {
      StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "| %-48s | %-6s |", ratios[i][0], ratios[i][1]));
      for (double v : values[i]) {
        line.append(String.format(Locale.ROOT, " %7.2f |", v));
      }
      System.out.println(line.append(String.format(Locale.ROOT, " %6.2f |", RedisThroughput.median(values[i]))));
    }
  }

  private static double median(List<Row> rows, java.util.function.ToDoubleFunction<Row> f) {
    return RedisThroughput.median(rows.stream().mapToDouble(f).toArray());
  }

  private static long nowMicros() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
  }

  private static String resource(String name) {
    try (InputStream in = RedisPeers.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

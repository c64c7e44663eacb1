package dev.ratelimit.bench;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.bench.ReferenceWorkload.Workload;
import dev.ratelimit.memory.InMemoryBackend;
import io.github.bucket4j.Bandwidth;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.TimeMeter;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;

/**
 * The in-memory reference workload, ours against Bucket4j's local bucket, side by side in one run
 * on the same workload: 200,000 checks round-robin over 1,000 keys, 100 per 60 s, a {@link
 * ManualClock} advancing 0.5 ms per check from epoch second 1,700,000,000, read by both (Bucket4j
 * through a {@link TimeMeter} on the same clock). Bucket4j is one local bucket per key (capacity
 * 100, greedy refill 100 per minute, the default lock-free synchronization) in a {@link
 * ConcurrentHashMap}, checked with {@code tryConsume(1)}; it has one algorithm, so each of ours is
 * paired with a Bucket4j run made right after it, and the ratio is taken within the pair. For
 * reference, also Bucket4j checked with {@code tryConsumeAndReturnRemaining(1)}, whose answer
 * (remaining, wait until refill) is closer to what our {@code Decision} carries ("probe"); and ours
 * asked with {@code tryAcquire(key, policy)}, a boolean like {@code tryConsume}'s, which on this
 * plain in-memory limiter builds no {@code Decision} ("tryAcquire ratio": its best of three against
 * the same Bucket4j runs).
 *
 * <p>Per round and algorithm: an untimed pass (checks/s over the whole run; ours and Bucket4j's
 * alternate three times on fresh state and the best of each counts, since the machine is shared and
 * a run is only a few milliseconds; also per second of the thread's CPU time, which time spent
 * descheduled by other processes does not inflate: the "cpu ratio") and a timed pass
 * ({@code System.nanoTime()} around each check; p50 and p99 in ns, the timer's own cost included,
 * for both alike). Then the median over the rounds. Then scaling: the same 200,000 checks by two
 * threads, each on its own 500 keys, one limiter (or one bucket map) and one {@link ManualClock}
 * shared (each thread moves it {@link #advanceEvery} steps after as many checks: together they
 * move it 0.5 ms per check), against one thread doing all of them the same way; scaling = checks/s
 * with 2 threads ÷ with 1. A scaling run is five times the workload (1,000,000 checks; {@code
 * --scaling-checks N}) so that it lasts long enough to time two threads; every scaling run of every
 * algorithm is made {@value #SCALING_WARMUP} times untimed first. Both sides read the clock without
 * allocating (until session 8 the shared clock built an {@code Instant} per read, and that
 * allocation, on both cores busy, held both sides' two threads near the same ceiling).
 *
 * <p>Options: {@code --rounds N} (default 5), {@code --warmup N} (default 20) untimed rounds first
 * (each a throughput and a timed pass per algorithm and side; with 3, a run of one algorithm still
 * measured ours before C2 had compiled its path: GCRA at 0.73, 0.94–1.00 with 20),
 * {@code --no-scaling}, {@code --scaling-checks N} (default 1,000,000), {@code --advance-every N}
 * (default 64), {@code --algorithms GCRA,FIXED_WINDOW} (default all). The bare map's reference
 * runs last: a third class of checker at the call sites the sides share would make them
 * megamorphic, and cost ours and Bucket4j's checks their inlining.
 */
public final class MemoryComparison {
  private static final Workload W = Workload.REFERENCE;

  private MemoryComparison() {}

  /** One paired measurement. */
  record Pair(double ours, double theirs, long oursAllowed, long theirsAllowed, double oursCpu,
      double theirsCpu, double probes, double answers) {
    /** Our {@code tryAcquire} (a boolean, as {@code tryConsume}) against Bucket4j's {@code tryConsume}. */
    double answerRatio() {
      return answers / theirs;
    }

    double probeRatio() {
      return ours / probes;
    }

    double ratio() {
      return ours / theirs;
    }

    double cpuRatio() {
      return oursCpu / theirsCpu;
    }
  }

  /** Runs the comparison; see the class comment for the options. */
  public static void main(String[] args) throws Exception {
    int rounds = 5;
    int warmup = 20;
    boolean scaling = true;
    Algorithm[] algorithms = Algorithm.values();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rounds" -> rounds = Integer.parseInt(args[++i]);
        case "--warmup" -> warmup = Integer.parseInt(args[++i]);
        case "--no-scaling" -> scaling = false;
        case "--scaling-checks" -> scalingChecks = Integer.parseInt(args[++i]);
        case "--advance-every" -> advanceEvery = Integer.parseInt(args[++i]);
        case "--algorithms" -> algorithms = java.util.Arrays.stream(args[++i].split(","))
            .map(Algorithm::valueOf).toArray(Algorithm[]::new);
        default -> {
          System.err.println("unknown option " + args[i]
              + "; options: --rounds N, --warmup N, --no-scaling, --scaling-checks N, --advance-every N, --algorithms A,B");
          System.exit(2);
        }
      }
    }
    if (rounds < 1 || warmup < 0 || advanceEvery < 1 || scalingChecks < 2 * advanceEvery) {
      System.err.println("--rounds must be at least 1, --warmup at least 0, --advance-every at least 1 and"
          + " --scaling-checks at least twice --advance-every; were " + rounds + ", " + warmup + ", "
          + advanceEvery + ", " + scalingChecks);
      System.exit(2);
    }
    for (int w = 0; w < warmup; w++) {
      for (Algorithm a : algorithms) {
        for (Side side : CONTENDERS) {
          throughput(a, side);
        }
        latency(a, Side.OURS);
        latency(a, Side.BUCKET4J);
      }
    }
    System.out.printf(Locale.ROOT, "clock advance alone (the loop's floor): %.1f ns per check%n%n",
        1e9 / floor());
    Map<Algorithm, List<Pair>> speed = new EnumMap<>(Algorithm.class);
    Map<Algorithm, List<long[]>> lat = new EnumMap<>(Algorithm.class);
    System.out.println("| round | algorithm      | allowed % | ours checks/s | bucket4j checks/s | ratio | cpu ratio | ours p50/p99 ns | b4j p50/p99 ns | ours tryAcquire/s | ratio |");
    System.out.println("|-------|----------------|-----------|---------------|-------------------|-------|-----------|-----------------|----------------|-------------------|-------|");
    for (int r = 1; r <= rounds; r++) {
      for (Algorithm a : algorithms) {
        double[] ours = {0, 0, 0};
        double[] theirs = {0, 0, 0};
        double probes = 0;
        double answers = 0;
        for (int b = 0; b < BEST_OF; b++) { // alternating, the best of each: the machine is shared
          double[] o = throughput(a, Side.OURS);
          double[] t = throughput(a, Side.BUCKET4J);
          ours = new double[] {Math.max(ours[0], o[0]), o[1], Math.max(ours[2], o[2])};
          theirs = new double[] {Math.max(theirs[0], t[0]), t[1], Math.max(theirs[2], t[2])};
          probes = Math.max(probes, throughput(a, Side.BUCKET4J_PROBE)[0]);
          answers = Math.max(answers, throughput(a, Side.OURS_TRY_ACQUIRE)[0]);
        }
        long[] ol = latency(a, Side.OURS);
        long[] tl = latency(a, Side.BUCKET4J);
        Pair p = new Pair(ours[0], theirs[0], (long) ours[1], (long) theirs[1], ours[2], theirs[2], probes,
            answers);
        speed.computeIfAbsent(a, k -> new ArrayList<>()).add(p);
        lat.computeIfAbsent(a, k -> new ArrayList<>()).add(new long[] {ol[0], ol[1], tl[0], tl[1]});
        System.out.printf(Locale.ROOT, "| %5d | %-14s | %9.2f | %13.0f | %17.0f | %5.2f | %9.2f | %7d / %5d | %6d / %5d | %17.0f | %5.2f |%n",
            r, a, 100.0 * p.oursAllowed() / W.checks(), p.ours(), p.theirs(), p.ratio(), p.cpuRatio(),
            ol[0], ol[1], tl[0], tl[1], p.answers(), p.answerRatio());
      }
    }
    System.out.println();
    System.out.println("Medians over " + rounds + " rounds (bucket4j allowed % for reference: "
        + String.format(Locale.ROOT, "%.2f", 100.0 * speed.get(algorithms[0]).get(0).theirsAllowed() / W.checks()) + ")");
    System.out.println("| algorithm      | allowed % | ours checks/s | bucket4j checks/s | ratio (median of rounds) | min ratio | cpu ratio (median) | ours p50 / p99 ns | b4j p50 / p99 ns | b4j probe checks/s | ratio vs probe | ours tryAcquire checks/s | tryAcquire ratio (median) | min |");
    System.out.println("|----------------|-----------|---------------|-------------------|--------------------------|-----------|--------------------|-------------------|------------------|--------------------|----------------|--------------------------|---------------------------|-----|");
    for (Algorithm a : algorithms) {
      List<Pair> ps = speed.get(a);
      List<long[]> ls = lat.get(a);
      System.out.printf(Locale.ROOT, "| %-14s | %9.2f | %13.0f | %17.0f | %24.2f | %9.2f | %18.2f | %7.0f / %7.0f | %6.0f / %7.0f | %18.0f | %14.2f | %24.0f | %25.2f | %3.2f |%n",
          a, 100.0 * ps.get(0).oursAllowed() / W.checks(),
          median(ps.stream().mapToDouble(Pair::ours).toArray()),
          median(ps.stream().mapToDouble(Pair::theirs).toArray()),
          median(ps.stream().mapToDouble(Pair::ratio).toArray()),
          ps.stream().mapToDouble(Pair::ratio).min().orElseThrow(),
          median(ps.stream().mapToDouble(Pair::cpuRatio).toArray()),
          median(ls.stream().mapToDouble(l -> l[0]).toArray()),
          median(ls.stream().mapToDouble(l -> l[1]).toArray()),
          median(ls.stream().mapToDouble(l -> l[2]).toArray()),
          median(ls.stream().mapToDouble(l -> l[3]).toArray()),
          median(ps.stream().mapToDouble(Pair::probes).toArray()),
          median(ps.stream().mapToDouble(Pair::probeRatio).toArray()),
          median(ps.stream().mapToDouble(Pair::answers).toArray()),
          median(ps.stream().mapToDouble(Pair::answerRatio).toArray()),
          ps.stream().mapToDouble(Pair::answerRatio).min().orElseThrow());
    }
    if (!scaling) {
      return;
    }
    System.out.println();
    System.out.println("Scaling: 2 threads, each its own 500 keys, one shared limiter / bucket map and one shared clock"
        + " (0.5 ms per check in all), vs 1 thread with all 1,000 keys the same way; " + scalingChecks + " checks per run; medians of " + rounds + " rounds");
    System.out.println("| algorithm      | ours 1T checks/s | ours 2T checks/s | ours scaling | b4j 1T checks/s | b4j 2T checks/s | b4j scaling | tryAcquire 1T | tryAcquire 2T | tryAcquire scaling | tryAcquire scaling, a limiter per thread |");
    System.out.println("|----------------|------------------|------------------|--------------|-----------------|-----------------|-------------|---------------|---------------|--------------------|------------------------------------------|");
    // warm-up of the 2-thread paths too (contended locks, Caffeine's buffers growing per thread):
    // without it the algorithms measured first paid for it, and scaled least
    for (int w = 0; w < SCALING_WARMUP; w++) {
      for (Algorithm a : algorithms) {
        for (int threads = 1; threads <= 2; threads++) {
          threaded(a, Side.OURS, threads);
          threaded(a, Side.BUCKET4J, threads);
          threaded(a, Side.OURS_TRY_ACQUIRE, threads);
          threaded(a, Side.OURS_TRY_ACQUIRE, threads, true);
        }
      }
    }
    java.util.Map<Algorithm, double[]> scalings = new java.util.LinkedHashMap<>();
    for (Algorithm a : algorithms) {
      double[][] runs = new double[8][rounds];
      for (int r = 0; r < rounds; r++) {
        runs[0][r] = threaded(a, Side.OURS, 1);
        runs[1][r] = threaded(a, Side.OURS, 2);
        runs[2][r] = threaded(a, Side.BUCKET4J, 1);
        runs[3][r] = threaded(a, Side.BUCKET4J, 2);
        runs[4][r] = threaded(a, Side.OURS_TRY_ACQUIRE, 1);
        runs[5][r] = threaded(a, Side.OURS_TRY_ACQUIRE, 2);
        runs[6][r] = threaded(a, Side.OURS_TRY_ACQUIRE, 1, true);
        runs[7][r] = threaded(a, Side.OURS_TRY_ACQUIRE, 2, true);
      }
      System.out.printf(Locale.ROOT, "| %-14s | %16.0f | %16.0f | %12.2f | %15.0f | %15.0f | %11.2f | %13.0f | %13.0f | %18.2f | %40.2f |%n", a,
          median(runs[0]), median(runs[1]), medianRatio(runs[1], runs[0]), median(runs[2]), median(runs[3]),
          medianRatio(runs[3], runs[2]), median(runs[4]), median(runs[5]), medianRatio(runs[5], runs[4]),
          medianRatio(runs[7], runs[6]));
      scalings.put(a, new double[] {medianRatio(runs[1], runs[0]), medianRatio(runs[5], runs[4])});
    }
    // the bare map last: a third class of checker at the call sites they share would make them
    // megamorphic, and the compiler would stop inlining ours and Bucket4j's checks there
    for (int w = 0; w < SCALING_WARMUP; w++) {
      for (int threads = 1; threads <= 2; threads++) {
        threaded(Algorithm.FIXED_WINDOW, Side.BARE_MAP, threads);
        threaded(Algorithm.FIXED_WINDOW, Side.BARE_MAP, threads, true);
      }
    }
    double[][] bare = new double[4][rounds];
    for (int r = 0; r < rounds; r++) {
      bare[0][r] = threaded(Algorithm.FIXED_WINDOW, Side.BARE_MAP, 1);
      bare[1][r] = threaded(Algorithm.FIXED_WINDOW, Side.BARE_MAP, 2);
      bare[2][r] = threaded(Algorithm.FIXED_WINDOW, Side.BARE_MAP, 1, true);
      bare[3][r] = threaded(Algorithm.FIXED_WINDOW, Side.BARE_MAP, 2, true);
    }
    System.out.println();
    System.out.printf(Locale.ROOT, "This machine's own scaling, for reference: a bare ConcurrentHashMap<String, long[]> fixed window"
        + " (no limiter), the same runs: 1T %.0f checks/s, 2T %.0f, scaling %.2f; a map and a clock per thread: scaling %.2f."
        + " A cache line's round trip between the two threads: %.0f ns%n",
        median(bare[0]), median(bare[1]), medianRatio(bare[1], bare[0]), medianRatio(bare[3], bare[2]),
        crossCoreRoundTripNanos());
    double bareScaling = medianRatio(bare[1], bare[0]);
    System.out.println();
    System.out.println("Scaling against the bare map's (the same run; target for check ≥ 0.9):");
    System.out.println("| algorithm      | check scaling / bare map's | tryAcquire scaling / bare map's |");
    System.out.println("|----------------|----------------------------|---------------------------------|");
    scalings.forEach((a, v) -> System.out.printf(Locale.ROOT, "| %-14s | %26.2f | %31.2f |%n", a,
        v[0] / bareScaling, v[1] / bareScaling));
  }

  /** The median over rounds of {@code over[r] / under[r]}. */
  static double medianRatio(double[] over, double[] under) {
    double[] ratios = new double[over.length];
    for (int r = 0; r < over.length; r++) {
      ratios[r] = over[r] / under[r];
    }
    return median(ratios);
  }

  /** Untimed rounds of every scaling run before the measured ones. */
  static final int SCALING_WARMUP = 5;

  /** Checks per scaling run: five times the workload's, so that a run lasts tens of milliseconds. */
  static int scalingChecks = 5 * W.checks();

  /** Throughput pairs measured per round and side, alternating; the best counts. */
  static final int BEST_OF = 3;

  private static double[] best(double[] a, double[] b) {
    return a[0] >= b[0] ? a : b;
  }

  static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    int n = v.length;
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }

  private static String[] keys(int from, int count) {
    String[] keys = new String[count];
    for (int i = 0; i < count; i++) {
      keys[i] = "user:" + (from + i);
    }
    return keys;
  }

  /** The sides compared in the single-thread table: all but the bare map. */
  static final List<Side> CONTENDERS = List.of(Side.OURS, Side.OURS_TRY_ACQUIRE, Side.BUCKET4J, Side.BUCKET4J_PROBE);

  /** Who is measured, and through which call. */
  enum Side {
    /** Ours, {@code check(key, policy).allowed()}: a {@code Decision} per call. */
    OURS,
    /** Ours, {@code tryAcquire(key, policy)}: the answer alone. */
    OURS_TRY_ACQUIRE,
    /** Bucket4j, {@code tryConsume(1)}. */
    BUCKET4J,
    /** Bucket4j, {@code tryConsumeAndReturnRemaining(1)}: what a {@code Decision} carries. */
    BUCKET4J_PROBE,
    /**
     * No limiter: a fixed window in a bare {@code ConcurrentHashMap<String, long[]>}, each key's
     * array updated under its monitor; the floor cost of a map lookup and an update (the
     * algorithm is ignored). A reference for scaling, not a contender.
     */
    BARE_MAP;

    Checker checker(Algorithm algorithm, InstantSource clock) {
      return switch (this) {
        case OURS -> ours(algorithm, clock, false);
        case OURS_TRY_ACQUIRE -> ours(algorithm, clock, true);
        case BUCKET4J -> bucket4j(clock, false);
        case BUCKET4J_PROBE -> bucket4j(clock, true);
        case BARE_MAP -> bareMap((ManualClock) clock);
      };
    }
  }

  /** A check: ours or Bucket4j's, on a workload's clock. */
  interface Checker extends AutoCloseable {
    boolean check(String key);

    @Override
    default void close() {}
  }

  /** Ours: {@code check(key, policy).allowed()}, or with {@code answerOnly} {@code tryAcquire(key, policy)}. */
  static Checker ours(Algorithm algorithm, InstantSource clock, boolean answerOnly) {
    Policy policy = W.policy(algorithm);
    RateLimiter limiter = RateLimiter.builder().clock(clock).backend(InMemoryBackend.create()).build();
    return new Checker() {
      @Override
      public boolean check(String key) {
        return answerOnly ? limiter.tryAcquire(key, policy) : limiter.check(key, policy).allowed();
      }

      @Override
      public void close() {
        limiter.close();
      }
    };
  }

  /**
   * Bucket4j's local buckets; with {@code probe}, checked with {@code tryConsumeAndReturnRemaining(1)},
   * whose answer (remaining, wait until refill) is what our {@code Decision} carries, else with
   * {@code tryConsume(1)}, a bare boolean.
   */
  static Checker bucket4j(InstantSource clock, boolean probe) {
    TimeMeter meter = new TimeMeter() {
      @Override
      public long currentTimeNanos() {
        if (clock instanceof ManualClock manual) {
          return manual.epochMicros() * 1_000L; // as cheap as our limiter's read, and as precise
        }
        Instant now = clock.instant();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
      }

      @Override
      public boolean isWallClockBased() {
        return false;
      }
    };
    Bandwidth limit = Bandwidth.builder().capacity(W.limit()).refillGreedy(W.limit(), W.window()).build();
    ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();
    return key -> {
      Bucket b = buckets.get(key);
      if (b == null) {
        b = buckets.computeIfAbsent(key, k -> Bucket.builder().addLimit(limit).withCustomTimePrecision(meter).build());
      }
      return probe ? b.tryConsumeAndReturnRemaining(1).isConsumed() : b.tryConsume(1);
    };
  }

  /** {@link Side#BARE_MAP}: the workload's limit per window, fixed windows, in a bare map. */
  static Checker bareMap(ManualClock clock) {
    ConcurrentHashMap<String, long[]> windows = new ConcurrentHashMap<>();
    long window = W.window().toNanos() / 1_000L;
    return key -> {
      long[] w = windows.get(key);
      if (w == null) {
        w = windows.computeIfAbsent(key, k -> new long[2]);
      }
      long current = clock.epochMicros() / window;
      synchronized (w) {
        if (w[0] != current) {
          w[0] = current;
          w[1] = 0;
        }
        return w[1] < W.limit() && ++w[1] > 0;
      }
    };
  }

  private static final java.lang.management.ThreadMXBean THREADS =
      java.lang.management.ManagementFactory.getThreadMXBean();

  /** Untimed: {checks/s, allowed, checks per second of this thread's CPU time}. */
  static double[] throughput(Algorithm algorithm, Side side) {
    ManualClock clock = ManualClock.at(ReferenceWorkload.START);
    String[] keys = keys(0, W.keys());
    long allowed = 0;
    try (Checker c = side.checker(algorithm, clock)) {
      long cpu = THREADS.getCurrentThreadCpuTime();
      long start = System.nanoTime();
      for (int i = 0, k = 0; i < W.checks(); i++) {
        allowed += c.check(keys[k]) ? 1 : 0;
        k = k + 1 == keys.length ? 0 : k + 1;
        clock.advanceMicros(W.stepMicros());
      }
      long elapsed = System.nanoTime() - start;
      cpu = THREADS.getCurrentThreadCpuTime() - cpu;
      return new double[] {W.checks() * 1e9 / elapsed, allowed, W.checks() * 1e9 / cpu};
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** Timed, one check at a time: {p50 ns, p99 ns}. */
  static long[] latency(Algorithm algorithm, Side side) {
    ManualClock clock = ManualClock.at(ReferenceWorkload.START);
    String[] keys = keys(0, W.keys());
    long[] nanos = new long[W.checks()];
    long allowed = 0;
    try (Checker c = side.checker(algorithm, clock)) {
      for (int i = 0, k = 0; i < W.checks(); i++) {
        long t0 = System.nanoTime();
        boolean ok = c.check(keys[k]);
        nanos[i] = System.nanoTime() - t0;
        allowed += ok ? 1 : 0;
        k = k + 1 == keys.length ? 0 : k + 1;
        clock.advanceMicros(W.stepMicros());
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    if (allowed < 0) {
      throw new AssertionError();
    }
    Arrays.sort(nanos);
    return new long[] {nanos[nanos.length / 2], nanos[(int) (nanos.length * 0.99)]};
  }

  /** The loop with no check: only the clock's advance, checks/s. */
  static double floor() {
    ManualClock clock = ManualClock.at(ReferenceWorkload.START);
    long best = Long.MAX_VALUE;
    for (int r = 0; r < 5; r++) {
      long start = System.nanoTime();
      for (int i = 0; i < W.checks(); i++) {
        clock.advanceMicros(W.stepMicros());
      }
      best = Math.min(best, System.nanoTime() - start);
    }
    return W.checks() * 1e9 / best;
  }

  /**
   * In the scaling runs each thread moves the shared clock by this many steps at once, after as
   * many checks: together the threads move it 0.5 ms per check, as one thread does alone, and a
   * read of the clock misses the cache once per this many checks of the other thread, not on every
   * check.
   */
  static int advanceEvery = 64;

  /** {@code threads} threads sharing one checker and one clock, each on its own keys: checks/s. */
  static double threaded(Algorithm algorithm, Side side, int threads) throws Exception {
    return threaded(algorithm, side, threads, false);
  }

  /**
   * {@code threads} threads, each on its own keys: checks/s. They share one checker and one clock,
   * or with {@code isolated} each has a checker and a clock of its own (moved by its own checks
   * only, at the same pace): nothing is shared, the reference for what the machine itself scales to.
   */
  static double threaded(Algorithm algorithm, Side side, int threads, boolean isolated) throws Exception {
    int perThread = scalingChecks / threads;
    int keysPerThread = W.keys() / threads;
    ManualClock sharedClock = ManualClock.at(ReferenceWorkload.START); // read without allocating, by both sides
    CyclicBarrier start = new CyclicBarrier(threads + 1);
    CyclicBarrier end = new CyclicBarrier(threads + 1);
    List<Checker> checkers = new ArrayList<>();
    Checker shared = isolated ? null : side.checker(algorithm, sharedClock);
    try {
      List<Thread> workers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        String[] keys = keys(t * keysPerThread, keysPerThread);
        ManualClock clock = isolated ? ManualClock.at(ReferenceWorkload.START) : sharedClock;
        long advance = advanceEvery * W.stepMicros() * (isolated ? threads : 1);
        Checker c = isolated ? side.checker(algorithm, clock) : shared;
        checkers.add(c);
        Thread worker = new Thread(() -> {
          try {
            start.await();
            long allowed = 0;
            for (int i = 0, k = 0; i < perThread; i++) {
              allowed += c.check(keys[k]) ? 1 : 0;
              k = k + 1 == keys.length ? 0 : k + 1;
              if ((i + 1) % advanceEvery == 0) {
                clock.advanceMicros(advance);
              }
            }
            if (allowed < 0) {
              throw new AssertionError();
            }
            end.await();
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        });
        workers.add(worker);
        worker.start();
      }
      start.await();
      long t0 = System.nanoTime();
      end.await();
      long elapsed = System.nanoTime() - t0;
      for (Thread w : workers) {
        w.join();
      }
      return scalingChecks * 1e9 / elapsed;
    } finally {
      for (Checker c : isolated ? checkers : List.of(shared)) {
        c.close();
      }
    }
  }

  /**
   * The round trip of one cache line between two threads (each waits for the other's write, then
   * writes), ns, median of 5 runs: what every write shared by the threads of a scaling run costs.
   */
  static double crossCoreRoundTripNanos() throws Exception {
    int n = 200_000;
    double[] runs = new double[5];
    for (int r = 0; r < runs.length; r++) {
      java.util.concurrent.atomic.AtomicLong line = new java.util.concurrent.atomic.AtomicLong();
      Thread other = new Thread(() -> {
        for (long i = 1; i <= n; i++) {
          while (line.get() != 2 * i - 1) {
            Thread.onSpinWait();
          }
          line.set(2 * i);
        }
      });
      other.start();
      long t0 = System.nanoTime();
      for (long i = 1; i <= n; i++) {
        line.set(2 * i - 1);
        while (line.get() != 2 * i) {
          Thread.onSpinWait();
        }
      }
      runs[r] = (double) (System.nanoTime() - t0) / n;
      other.join();
    }
    return median(runs);
  }
}

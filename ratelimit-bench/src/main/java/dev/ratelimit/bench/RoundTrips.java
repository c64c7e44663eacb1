package dev.ratelimit.bench;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.redis.RedisBackend;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.IntConsumer;
import java.util.stream.Collectors;
import org.redisson.api.RedissonClient;

/**
 * How many Redis commands a check costs, counted by the server: on a redis-server it starts, {@code
 * CONFIG RESETSTAT}, {@value #N} sync {@code check}s, then {@code INFO commandstats}; the same for
 * {@code checkAll} of three policies (GCRA, FIXED_WINDOW, SLIDING_WINDOW). Then the p50 latency of
 * {@code checkAll} against that of one {@code check} (sync, one in flight, {@value #SAMPLES} each).
 */
public final class RoundTrips {
  /** Checks per count. */
  public static final int N = 1_000;
  /** Latency samples per operation. */
  public static final int SAMPLES = 5_000;

  private static final Policy GCRA = Policy.of(100, Duration.ofSeconds(60));
  private static final List<Policy> THREE = List.of(GCRA,
      Policy.of(100, Duration.ofSeconds(60), Algorithm.FIXED_WINDOW),
      Policy.of(100, Duration.ofSeconds(60), Algorithm.SLIDING_WINDOW));
  /** Commands this main sends itself to take the count; not part of a check's cost. */
  private static final List<String> OWN = List.of("config|resetstat", "info", "echo");

  private RoundTrips() {}

  public static void main(String[] args) {
    String prefix = BenchRedis.newPrefix();
    RedisServer server = RedisServer.start();
    RedissonClient redisson = null;
    try {
      redisson = BenchRedis.single(server.url());
      System.out.println("server: " + server.url() + " (pid " + server.pid()
          + ", started and stopped by this run), key prefix " + prefix);
      System.out.println("policies: check " + GCRA.name() + "; checkAll "
          + THREE.stream().map(Policy::name).collect(Collectors.joining(" + ")));
      try (RateLimiter limiter = RateLimiter.builder().clock(InstantSource.system())
          .backend(RedisBackend.builder(redisson).keyPrefix(prefix).build()).build()) {
        String[] keys = new String[N];
        for (int i = 0; i < N; i++) {
          keys[i] = "user:" + i;
        }
        IntConsumer check = i -> limiter.check(keys[i % N], GCRA);
        IntConsumer checkAll = i -> limiter.checkAll(keys[i % N], THREE, 1);
        // warm up both paths (connections, JIT) before counting
        for (int i = 0; i < 2_000; i++) {
          check.accept(i);
          checkAll.accept(i);
        }

        System.out.println();
        System.out.println("EVALSHA and all commands: INFO commandstats after CONFIG RESETSTAT (commands run"
            + " inside scripts count too); round trips: commands sent by clients, seen through MONITOR.");
        System.out.println("| operation             | calls | EVALSHA | EVALSHA/call | all commands/call | round trips/call | commandstats (without this main's own) | sent by clients (MONITOR) |");
        System.out.println("|-----------------------|-------|---------|--------------|-------------------|------------------|----------------------------------------|---------------------------|");
        try (Monitor monitor = Monitor.open(server.host(), server.port())) {
          count(server, monitor, "check (1 policy)", check);
          count(server, monitor, "checkAll (3 policies)", checkAll);
        }

        long[] one = new long[SAMPLES];
        long[] all = new long[SAMPLES];
        int block = 500;
        for (int from = 0; from < SAMPLES; from += block) {
          // which side runs first alternates: the first block of a pair tends to measure fastest
          boolean checkFirst = (from / block) % 2 == 0;
          time(checkFirst ? check : checkAll, checkFirst ? one : all, from, block);
          time(checkFirst ? checkAll : check, checkFirst ? all : one, from, block);
        }
        Arrays.sort(one);
        Arrays.sort(all);
        double p50One = one[SAMPLES / 2] / 1e3;
        double p50All = all[SAMPLES / 2] / 1e3;
        System.out.println();
        System.out.println("sync, 1 in flight, " + SAMPLES + " each (alternating blocks of " + block
            + ", each side first in every other pair):");
        System.out.println("| operation             | p50 µs  | p99 µs  |");
        System.out.println("|-----------------------|---------|---------|");
        System.out.printf(Locale.ROOT, "| check (1 policy)      | %7.1f | %7.1f |%n", p50One,
            one[(int) (SAMPLES * 0.99)] / 1e3);
        System.out.printf(Locale.ROOT, "| checkAll (3 policies) | %7.1f | %7.1f |%n", p50All,
            all[(int) (SAMPLES * 0.99)] / 1e3);
        System.out.printf(Locale.ROOT, "p50 checkAll / p50 check = %.2f%n", p50All / p50One);
        double serverOne = serverMicros(server, check);
        double serverAll = serverMicros(server, checkAll);
        System.out.printf(Locale.ROOT, "server time per EVALSHA (INFO commandstats, %d calls each, no MONITOR):"
            + " check %.2f µs, checkAll %.2f µs, ratio %.2f%n", N, serverOne, serverAll, serverAll / serverOne);
      }
    } finally {
      BenchRedis.shutdown(redisson);
      server.close();
    }
  }

  /** Times {@code op} for samples {@code from} to {@code from + block} into {@code nanos}. */
  private static void time(IntConsumer op, long[] nanos, int from, int block) {
    for (int i = from; i < from + block; i++) {
      long t0 = System.nanoTime();
      op.accept(i);
      nanos[i] = System.nanoTime() - t0;
    }
  }

  private static void count(RedisServer server, Monitor monitor, String label, IntConsumer op) {
    server.command("CONFIG", "RESETSTAT");
    monitor.start(marker -> server.command("ECHO", marker));
    for (int i = 0; i < N; i++) {
      op.accept(i);
    }
    monitor.stop(marker -> server.command("ECHO", marker));
    Map<String, Long> calls = BenchRedis.commandCalls(server.info("commandstats"));
    calls.keySet().removeAll(OWN);
    long evalsha = calls.getOrDefault("evalsha", 0L);
    long total = calls.values().stream().mapToLong(Long::longValue).sum();
    Map<String, Long> sent = monitor.clientCommands();
    long roundTrips = sent.values().stream().mapToLong(Long::longValue).sum();
    System.out.printf(Locale.ROOT, "| %-21s | %5d | %7d | %12.3f | %17.3f | %16.3f | %-38s | %-25s |%n",
        label, N, evalsha, (double) evalsha / N, (double) total / N, (double) roundTrips / N,
        join(calls), join(sent));
  }

  /** The server's µs per {@code EVALSHA} over {@value #N} calls of {@code op}, from {@code INFO commandstats}. */
  private static double serverMicros(RedisServer server, IntConsumer op) {
    server.command("CONFIG", "RESETSTAT");
    for (int i = 0; i < N; i++) {
      op.accept(i);
    }
    String info = server.info("commandstats");
    for (String line : info.split("\r?\n")) {
      if (line.startsWith("cmdstat_evalsha:")) {
        for (String field : line.substring(line.indexOf(':') + 1).split(",")) {
          if (field.startsWith("usec_per_call=")) {
            return Double.parseDouble(field.substring("usec_per_call=".length()));
          }
        }
      }
    }
    return Double.NaN;
  }

  private static String join(Map<String, Long> calls) {
    return calls.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
        .collect(Collectors.joining(", "));
  }
}

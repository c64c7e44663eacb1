package dev.ratelimit.bench;

import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.redis.RedisBackend;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import org.redisson.api.RedissonClient;

/**
 * One key hammered far past its limit (an attack), on a Redis server this main starts: checks/s of
 * a sync {@code check} with the near-cache and without it, alternating, in the same run; the
 * ratio per round and its median. Real clock; the policy is 10 per minute, so nearly every check
 * is denied (one passes every 6 s, as the policy allows).
 *
 * <pre>{@code java -cp ratelimit-bench/target/benchmarks.jar dev.ratelimit.bench.HotDeniedKey [--seconds 3] [--rounds 3]}</pre>
 */
public final class HotDeniedKey {
  private HotDeniedKey() {}

  public static void main(String[] args) {
    int seconds = 3;
    int rounds = 3;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--seconds" -> seconds = Integer.parseInt(args[i + 1]);
        case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
        default -> throw new IllegalArgumentException("unknown option " + args[i] + "; use --seconds N --rounds N");
      }
    }
    Policy policy = Policy.of(10, Duration.ofMinutes(1));
    try (RedisServer server = RedisServer.start()) {
      RedissonClient redisson = BenchRedis.single(server.url());
      String prefix = BenchRedis.newPrefix();
      try (RateLimiter cached = RateLimiter.builder().nearCache(true)
              .backend(RedisBackend.builder(redisson).keyPrefix(prefix).build()).build();
          RateLimiter uncached = RateLimiter.builder().nearCache(false)
              .backend(RedisBackend.builder(redisson).keyPrefix(prefix).build()).build()) {
        cached.check("attacker", policy, 10); // exhaust the key
        System.out.printf(Locale.ROOT, "server: %s; policy %s; one key, denied; sync check, 1 thread%n",
            server.url(), policy.name());
        System.out.println("| round  | near-cache checks/s | without checks/s | ratio  |");
        System.out.println("|--------|---------------------|------------------|--------|");
        double[] with = new double[rounds];
        double[] without = new double[rounds];
        double[] ratio = new double[rounds];
        run(cached, policy, 1); // warm-up
        run(uncached, policy, 1);
        for (int r = 0; r < rounds; r++) {
          with[r] = run(cached, policy, seconds);
          without[r] = run(uncached, policy, seconds);
          ratio[r] = with[r] / without[r];
          System.out.printf(Locale.ROOT, "| %-6d | %19.0f | %16.0f | %6.1f |%n", r + 1, with[r], without[r], ratio[r]);
        }
        System.out.printf(Locale.ROOT, "| median | %19.0f | %16.0f | %6.1f |%n", median(with), median(without),
            median(ratio));
      } finally {
        redisson.shutdown();
      }
    }
  }

  /** Checks/s of one thread over {@code seconds}; fails if a check is ever degraded (a failure mode's). */
  private static double run(RateLimiter limiter, Policy policy, int seconds) {
    long end = System.nanoTime() + seconds * 1_000_000_000L;
    long started = System.nanoTime();
    long checks = 0;
    while (System.nanoTime() < end) {
      for (int i = 0; i < 100; i++) {
        var d = limiter.check("attacker", policy);
        if (d.isDegraded()) {
          throw new IllegalStateException("a check was decided by the failure mode: " + d);
        }
      }
      checks += 100;
    }
    return checks * 1e9 / (System.nanoTime() - started);
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }
}

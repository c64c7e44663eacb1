package dev.ratelimit.bench;

import dev.ratelimit.spi.Backend;
import dev.ratelimit.redis.RedisBackend;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/** Redis plumbing shared by the benchmark mains: clients, key prefixes, commandstats */
public final class BenchRedis {
  private static final SecureRandom RANDOM = new SecureRandom();

  private BenchRedis() {}

  /** A key prefix no other run uses: {@code bench-} and 8 random hex digits. */
  public static String newPrefix() {
    return "bench-" + HexFormat.of().toHexDigits(RANDOM.nextInt());
  }

  /** A Redisson client for one server ({@code redis://host:port}), with no retries. */
  public static RedissonClient single(String url) {
    Config config = new Config();
    config.setCodec(StringCodec.INSTANCE);
    config.useSingleServer()
        .setAddress(url)
        .setRetryAttempts(0)
        .setTimeout(3_000);
    return Redisson.create(config);
  }

  /** A Redisson client for a Redis Cluster, given (some of) its nodes' URLs. */
  public static RedissonClient cluster(List<String> urls) {
    Config config = new Config();
    config.setCodec(StringCodec.INSTANCE);
    config.useClusterServers()
        .addNodeAddress(urls.toArray(String[]::new))
        .setRetryAttempts(0)
        .setTimeout(3_000);
    return Redisson.create(config);
  }

  /** Fresh Redis backends with the default timeout under {@code prefix}, as an application builds them. */
  public static Supplier<Backend> backends(RedissonClient redisson, String prefix) {
    return () -> RedisBackend.builder(redisson).keyPrefix(prefix).build();
  }

  /**
   * The {@code calls} of each command in the text of {@code INFO commandstats}, in the order given:
   * {@code cmdstat_evalsha:calls=1000,usec=...} becomes {@code evalsha -> 1000}.
   */
  public static Map<String, Long> commandCalls(String info) {
    Map<String, Long> calls = new LinkedHashMap<>();
    for (String line : info.split("\r?\n")) {
      if (!line.startsWith("cmdstat_")) {
        continue;
      }
      int colon = line.indexOf(':');
      String name = line.substring("cmdstat_".length(), colon);
      for (String field : line.substring(colon + 1).split(",")) {
        if (field.startsWith("calls=")) {
          calls.put(name, Long.parseLong(field.substring("calls=".length())));
        }
      }
    }
    return calls;
  }

  /** The {@code failed_calls} of each command in {@code INFO commandstats} (Redis 7+; empty before). */
  public static Map<String, Long> commandFailures(String info) {
    Map<String, Long> failed = new LinkedHashMap<>();
    for (String line : info.split("\r?\n")) {
      if (!line.startsWith("cmdstat_")) {
        continue;
      }
      int colon = line.indexOf(':');
      String name = line.substring("cmdstat_".length(), colon);
      long n = 0;
      for (String field : line.substring(colon + 1).split(",")) {
        if (field.startsWith("failed_calls=") || field.startsWith("rejected_calls=")) {
          n += Long.parseLong(field.substring(field.indexOf('=') + 1));
        }
      }
      failed.put(name, n);
    }
    return failed;
  }

  /** Closes a Redisson client quietly and quickly. */
  static void shutdown(RedissonClient redisson) {
    if (redisson != null) {
      redisson.shutdown(0, 2, java.util.concurrent.TimeUnit.SECONDS);
    }
  }
}

package dev.ratelimit.redis;

import java.util.List;
import java.util.UUID;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** Redisson clients for tests, with a limiter-sized timeout and no retries. */
final class Clients {
  private Clients() {}

  static RedissonClient single(String url) {
    Config config = new Config();
    config.useSingleServer().setAddress(url).setTimeout(1_000).setRetryAttempts(0)
        .setConnectionMinimumIdleSize(2).setConnectionPoolSize(16);
    return Redisson.create(config);
  }

  static RedissonClient cluster(List<String> urls) {
    Config config = new Config();
    config.useClusterServers().addNodeAddress(urls.toArray(String[]::new)).setTimeout(1_000)
        .setRetryAttempts(0).setMasterConnectionMinimumIdleSize(2).setMasterConnectionPoolSize(16);
    return Redisson.create(config);
  }

  /** A key prefix of this test run's own: tests never touch keys outside it. */
  static String uniquePrefix() {
    return "rltest-" + UUID.randomUUID().toString().substring(0, 8);
  }
}

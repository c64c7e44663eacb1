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

  /**
   * {@code keys}, the first as it is and each other with a suffix (found by trying) that puts its
   * Redis keys under {@code prefix} in the first key's hash slot: keys a Cluster takes in one call.
   */
  static List<String> inOneSlot(String prefix, List<String> keys) {
    RedisKeys redisKeys = new RedisKeys(prefix);
    dev.ratelimit.Policy any = dev.ratelimit.Policy.of(1, java.time.Duration.ofSeconds(1));
    int slot = RedisKeys.slot((String) redisKeys.of(keys.get(0), any).get(0));
    List<String> together = new java.util.ArrayList<>(List.of(keys.get(0)));
    for (String key : keys.subList(1, keys.size())) {
      String candidate = key;
      for (int i = 0; RedisKeys.slot((String) redisKeys.of(candidate, any).get(0)) != slot; i++) {
        candidate = key + "~" + i;
      }
      together.add(candidate);
    }
    return together;
  }
}

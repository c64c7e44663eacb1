package dev.ratelimit.redis;

import dev.ratelimit.Policy;
import dev.ratelimit.spi.Backend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import dev.ratelimit.tck.RateLimiterContract;
import dev.ratelimit.tck.redis.RedisCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.redisson.api.RedissonClient;

/** The whole contract suite, unchanged, on a 3-master Redis Cluster the tests start on loopback. */
class RedisClusterContractTest extends RateLimiterContract {
  private static final String PREFIX = Clients.uniquePrefix();
  private static RedissonClient client;

  @BeforeAll
  static void connect() {
    client = Clients.cluster(RedisCluster.shared().urls());
  }

  @AfterAll
  static void disconnect() {
    client.shutdown();
  }

  @Override
  protected Backend newBackend() {
    return RedisBackend.builder(client).keyPrefix(PREFIX).timeout(Duration.ofSeconds(10)).build();
  }

  /**
   * In a Cluster, a check of pairs of different keys is all or nothing per hash slot
   * (RedisCrossKeyTest): keys of the first key's slot, by a suffix found by trying.
   */
  @Override
  protected List<String> checkedTogether(List<String> keys) {
    RedisKeys redisKeys = new RedisKeys(PREFIX);
    Policy any = Policy.of(1, Duration.ofSeconds(1));
    int slot = RedisKeys.slot((String) redisKeys.of(keys.get(0), any).get(0));
    List<String> together = new ArrayList<>(List.of(keys.get(0)));
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

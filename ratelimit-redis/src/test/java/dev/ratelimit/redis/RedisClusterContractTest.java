package dev.ratelimit.redis;

import dev.ratelimit.spi.Backend;
import java.time.Duration;
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
    return Clients.inOneSlot(PREFIX, keys);
  }
}

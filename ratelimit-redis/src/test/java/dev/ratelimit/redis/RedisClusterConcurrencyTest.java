package dev.ratelimit.redis;

import dev.ratelimit.spi.Backend;
import java.time.Duration;
import dev.ratelimit.tck.ConcurrencyContract;
import dev.ratelimit.tck.redis.RedisCluster;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.redisson.api.RedissonClient;

/** 4 limiter instances with their own cluster clients admit exactly the limit, on one key and many. */
class RedisClusterConcurrencyTest extends ConcurrencyContract {
  private static final String PREFIX = Clients.uniquePrefix();
  private static final List<RedissonClient> CLIENTS = new ArrayList<>();

  @BeforeAll
  static void connect() {
    for (int i = 0; i < 4; i++) {
      CLIENTS.add(Clients.cluster(RedisCluster.shared().urls()));
    }
  }

  @AfterAll
  static void disconnect() {
    CLIENTS.forEach(RedissonClient::shutdown);
    CLIENTS.clear();
  }

  @Override
  protected int instances() {
    return CLIENTS.size();
  }

  @Override
  protected int checksPerThread() {
    return 40;
  }

  @Override
  protected Backend newBackend(int instance) {
    return RedisBackend.builder(CLIENTS.get(instance)).keyPrefix(PREFIX).timeout(Duration.ofSeconds(10)).build();
  }

  /** In a Cluster, a check of pairs of different keys is all or nothing per hash slot (RedisClusterCrossKeyTest). */
  @Override
  protected boolean atomicAcrossKeys() {
    return false;
  }
}

package dev.ratelimit.redis;

import dev.ratelimit.spi.Backend;
import dev.ratelimit.tck.ReservationContract;
import dev.ratelimit.tck.redis.RedisCluster;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.redisson.api.RedissonClient;

/** The reservation contract on a 3-master Redis Cluster, the near-cache on (the default). */
class RedisClusterReservationContractTest extends ReservationContract {
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

  @Override
  protected int traces() {
    return 4;
  }
}

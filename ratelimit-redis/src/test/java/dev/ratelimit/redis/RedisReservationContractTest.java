package dev.ratelimit.redis;

import dev.ratelimit.spi.Backend;
import dev.ratelimit.tck.ReservationContract;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.redisson.api.RedissonClient;

/** The reservation contract on one Redis node, its near-cache off: every answer from the scripts. */
class RedisReservationContractTest extends ReservationContract {
  private static final String PREFIX = Clients.uniquePrefix();
  private static RedissonClient client;

  @BeforeAll
  static void connect() {
    client = Clients.single(RedisServer.shared().url());
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
  protected Boolean nearCache() {
    return false;
  }

  @Override
  protected int traces() {
    return 8;
  }
}

package dev.ratelimit.redis;

import dev.ratelimit.spi.Backend;
import java.time.Duration;
import dev.ratelimit.tck.RateLimiterContract;
import dev.ratelimit.tck.redis.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.redisson.api.RedissonClient;

/** The whole contract suite, unchanged, on one Redis node ({@code REDIS_URL} or one the tests start). */
class RedisContractTest extends RateLimiterContract {
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
}

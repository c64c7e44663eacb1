package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Policy;
import dev.ratelimit.tck.redis.RedisCluster;
import dev.ratelimit.tck.redis.RedisServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/** The one way the modules open a Redisson client from a URL: what it refuses, what it lets start. */
class RedisClientsTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(2);

  @Test
  void aUrlsClientReachesItsDatabaseWithItsUserAndPassword() {
    try (RedisServer redis = RedisServer.builder().user("limiter", "s3cret").start()) {
      RedissonClient client = RedisClients.open("redis://limiter:s3cret@" + redis.host() + ":" + redis.port() + "/4",
          TIMEOUT, "ratelimit.redis.url");
      try {
        RedisBackend backend = RedisBackend.builder(client).keyPrefix("rc").build();
        assertThat(backend.check("k", Policy.parse("1/1m"), 1, System.currentTimeMillis() * 1_000).allowed()).isTrue();
        redis.command("SELECT", 4);
        assertThat(redis.info("keyspace")).as("the key is in database 4").contains("db4:keys=1").doesNotContain("db0");
      } finally {
        client.shutdown();
      }
    }
  }

  @Test
  void refusedCredentialsOrDatabaseFailWithTheirSettingNamedAndNoPassword() {
    try (RedisServer redis = RedisServer.builder().user("limiter", "s3cret").start()) {
      String at = redis.host() + ":" + redis.port();
      assertThatThrownBy(() -> RedisClients.open("redis://limiter:hunter2@" + at, TIMEOUT, "ratelimit.redis.url"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("ratelimit.redis.url: Redis at redis://***@" + at + " refused the connection")
          .hasMessageContaining("WRONGPASS").hasMessageContaining("check the user, password (percent-encoded)")
          .hasMessageNotContaining("hunter2");
      assertThatThrownBy(() -> RedisClients.open("redis://" + at, TIMEOUT, "some.url"))
          .as("no credentials where Redis needs them").isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("some.url: ").hasMessageContaining("NOAUTH");
      assertThatThrownBy(() -> RedisClients.open("redis://limiter:s3cret@" + at + "/99", TIMEOUT, "ratelimit.redis.url"))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("DB index is out of range");
    }
    try (RedisServer redis = RedisServer.start()) {
      assertThatThrownBy(() -> RedisClients.open("redis://:hunter2@" + redis.host() + ":" + redis.port(), TIMEOUT,
          "ratelimit.redis.url")).as("a password for a Redis without one").isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("ratelimit.redis.url").hasMessageNotContaining("hunter2");
    }
  }

  @Test
  void aNodeOfAClusterOfSeveralIsRefusedAndAClusterOfOneIsServed() {
    String node = RedisCluster.shared().nodes().get(0).url(); // 3 masters
    assertThatThrownBy(() -> RedisClients.open(node, TIMEOUT, "ratelimit.redis.url"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("ratelimit.redis.url: Redis at " + node + " is a node of a Redis Cluster of 3 nodes")
        .hasMessageContaining("spring.data.redis.cluster.nodes").hasMessageContaining("RateLimitConfig.filterBuilder");
    try (RedisCluster single = RedisCluster.start(1)) {
      RedissonClient client = RedisClients.open(single.nodes().get(0).url(), TIMEOUT, "ratelimit.redis.url");
      try {
        RedisBackend backend = RedisBackend.builder(client).keyPrefix("rc1").build();
        assertThat(backend.check("k", Policy.parse("1/1m"), 1, System.currentTimeMillis() * 1_000).allowed()).isTrue();
      } finally {
        client.shutdown();
      }
    }
  }

  @Test
  void aRedisThatIsDownLetsTheClientOpenAndItConnectsOnceRedisIsUp() throws Exception {
    try (RedisServer redis = RedisServer.start()) {
      redis.stop();
      RedissonClient client = RedisClients.open(redis.url(), TIMEOUT, "ratelimit.redis.url");
      try {
        redis.restart();
        RedisBackend backend = RedisBackend.builder(client).keyPrefix("rcdown").build();
        assertThat(backend.check("k", Policy.parse("1/1m"), 1, System.currentTimeMillis() * 1_000).allowed()).isTrue();
        assertThat(redis.command("DBSIZE")).isEqualTo(1L);
      } finally {
        client.shutdown();
      }
    }
  }

  @Test
  void theConnectTimeoutIsTheTimeoutAndARedisThatNeverAnswersLetsTheClientOpen() throws IOException {
    // accepts connections and never answers: the probe gives up after its wait, and start-up goes on
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      RedissonClient client = RedisClients.open("redis://127.0.0.1:" + silent.getLocalPort(), Duration.ofMillis(300),
          "ratelimit.redis.url");
      try {
        assertThat(client.getConfig().useSingleServer().getConnectTimeout()).isEqualTo(300);
        assertThat(client.getConfig().useSingleServer().getTimeout()).isEqualTo(300);
        assertThat(client.getConfig().useSingleServer().getRetryAttempts()).isZero();
      } finally {
        client.shutdown();
      }
    }
  }

  @Test
  void aBadUrlNamesItsSetting() {
    assertThatThrownBy(() -> RedisClients.open("http://h", TIMEOUT, "ratelimit.redis.url"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("ratelimit.redis.url: 'http://h'");
  }
}

package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.tck.redis.RedisSentinels;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.redisson.config.ReadMode;
import org.redisson.config.SentinelServersConfig;

/**
 * Sentinel: the master killed under the load of three limiter instances ({@link TopologyLoad}), the
 * replica promoted, the clients following; docs/redis.md quotes this test.
 */
class RedisSentinelFailoverTest {
  /** How long the Sentinel waits without an answer before it calls the master down. */
  static final Duration DOWN_AFTER = Duration.ofSeconds(1);

  @Test
  void aKilledMasterIsReplacedByItsReplicaAndTheClientsFollow() {
    String prefix = Clients.uniquePrefix();
    List<RedissonClient> clients = new ArrayList<>();
    try (RedisSentinels group = RedisSentinels.start(1, null, null, DOWN_AFTER)) {
      for (int i = 0; i < RedisTopologyChangeTest.INSTANCES; i++) {
        clients.add(client(group));
      }
      try (TopologyLoad load = new TopologyLoad(clients, c -> RedisBackend.builder(c).keyPrefix(prefix).build(),
          RedisTopologyChangeTest.THREADS_PER_INSTANCE).warmUp(2_000)) {
        load.markEvent();
        group.killMaster();
        group.awaitPromoted(Duration.ofSeconds(20));
        TopologyLoad.Result r = load.finish(Duration.ofSeconds(1), 200, Duration.ofSeconds(20));
        System.out.println("Sentinel, killed master: " + r);
        assertThat(r.errors()).as("exceptions that reached callers").isEmpty();
        // as in a Cluster: asynchronous replication, at most one check in flight per caller, two policies each
        assertThat(r.overAdmitted()).as("admissions beyond a limit: %s", r).isLessThanOrEqualTo(2L * load.callers());
        assertThat(r.byFailureModeAfterEvent()).as("the failure mode decided while there was no master").isPositive();
        assertThat(r.fromRedisAfterEvent()).as("decisions from the new master").isGreaterThan(200);
        assertThat((Long) group.replica().command("DBSIZE")).as("the promoted replica holds the keys").isPositive();
        // down-after, the Sentinel's election and reconfiguration, Redisson's switch, a busy machine
        assertThat(r.recovery()).as("until every decision comes from Redis again: %s", r)
            .isLessThan(DOWN_AFTER.plusSeconds(8));
      }
    } finally {
      clients.forEach(RedissonClient::shutdown);
    }
  }

  private static RedissonClient client(RedisSentinels group) {
    Config config = new Config();
    SentinelServersConfig servers = config.useSentinelServers().setMasterName(RedisSentinels.MASTER_NAME)
        .setCheckSentinelsList(false).setReadMode(ReadMode.MASTER).setTimeout(1_000).setRetryAttempts(0)
        .setMasterConnectionMinimumIdleSize(2).setMasterConnectionPoolSize(16);
    group.sentinelNodes().forEach(node -> servers.addSentinelAddress("redis://" + node));
    return Redisson.create(config);
  }
}

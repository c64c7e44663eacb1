package dev.ratelimit.tck.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The topology changes tests drive: replicas, failover, a killed master, slot migration, a new master. */
class RedisClusterTopologyTest {
  private static final Duration PROMOTION = Duration.ofSeconds(15);

  @Test
  void replicasFailoverKillMigrateAndAddAMaster() {
    List<RedisServer> all = new ArrayList<>();
    try (RedisCluster cluster = RedisCluster.start(3, 1)) {
      all.addAll(cluster.nodes());
      assertThat(cluster.nodes()).hasSize(6);
      assertThat(cluster.masters()).containsExactlyInAnyOrderElementsOf(cluster.nodes().subList(0, 3));
      RedisServer first = cluster.nodeFor("{a}");
      assertThat(cluster.replicasOf(first)).hasSize(1);
      first.command("SET", "{a}", "1");

      RedisServer replica = cluster.replicasOf(first).get(0);
      cluster.failover(replica, PROMOTION);
      assertThat(cluster.nodeFor("{a}")).isEqualTo(replica);
      assertThat(replica.command("GET", "{a}")).as("a graceful failover hands every write over").isEqualTo("1");
      assertThat(cluster.replicasOf(replica)).as((String) first.command("CLUSTER", "NODES")).containsExactly(first);

      long pid = replica.pid();
      cluster.kill(replica);
      assertThat(replica.running()).isFalse();
      assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)).isFalse();
      cluster.awaitPromoted(first, PROMOTION);
      assertThat(cluster.nodeFor("{a}")).isEqualTo(first);
      assertThat(first.command("GET", "{a}")).isEqualTo("1");

      int slot = cluster.slot("{a}");
      RedisServer added = cluster.addMaster();
      cluster.migrateSlot(slot, added, Duration.ZERO);
      assertThat(cluster.nodeFor("{a}")).isEqualTo(added);
      assertThat(added.command("GET", "{a}")).isEqualTo("1");
      assertThat(cluster.masters()).contains(added);
      all.add(added);
    }
    assertThat(all).noneMatch(RedisServer::running);
  }
}

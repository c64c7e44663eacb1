package dev.ratelimit.tck.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.net.ConnectException;
import java.net.Socket;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import org.junit.jupiter.api.Test;

class RedisClusterTest {
  @Test
  void threeMastersCoverEverySlotAndNodeForFindsTheOwner() {
    List<Integer> ports = new ArrayList<>();
    try (RedisCluster cluster = RedisCluster.start(3)) {
      List<RedisServer> nodes = cluster.nodes();
      assertThat(nodes).hasSize(3);
      nodes.forEach(n -> ports.add(n.port()));
      assertThat(cluster.urls())
          .containsExactly(nodes.stream().map(n -> "redis://127.0.0.1:" + n.port()).toArray(String[]::new));

      for (RedisServer n : nodes) {
        assertThat(n.owned()).isTrue();
        assertThat((String) n.command("CLUSTER", "INFO"))
            .contains("cluster_state:ok\r\n")
            .contains("cluster_slots_assigned:16384\r\n")
            .contains("cluster_known_nodes:3\r\n")
            .contains("cluster_size:3\r\n");
      }

      // CLUSTER SLOTS: [[from, to, [host, port, id, ...]], ...] covers 0..16383, one range per node
      BitSet covered = new BitSet();
      List<Long> masterPorts = new ArrayList<>();
      for (Object range : (List<?>) nodes.get(1).command("CLUSTER", "SLOTS")) {
        List<?> r = (List<?>) range;
        int from = ((Long) r.get(0)).intValue();
        int to = ((Long) r.get(1)).intValue();
        assertThat(covered.get(from, to + 1).isEmpty()).as("overlap at %d-%d", from, to).isTrue();
        covered.set(from, to + 1);
        masterPorts.add((Long) ((List<?>) r.get(2)).get(1));
        assertThat(r).hasSize(3); // no replicas
      }
      assertThat(covered.cardinality()).isEqualTo(RedisCluster.SLOTS);
      assertThat(covered.nextClearBit(0)).isEqualTo(RedisCluster.SLOTS);
      assertThat(masterPorts).containsExactlyInAnyOrderElementsOf(
          ports.stream().map(Integer::longValue).toList());

      for (String key : List.of("{a}x", "{b}y", "rl:{user42}:p", "plain")) {
        RedisServer owner = cluster.nodeFor(key);
        long slot = (Long) owner.command("CLUSTER", "KEYSLOT", key);
        assertThat(owner.command("SET", key, "v")).isEqualTo("OK");
        assertThat(owner.command("GET", key)).isEqualTo("v");
        for (RedisServer other : nodes) {
          if (other != owner) {
            RedisReplyException moved =
                catchThrowableOfType(RedisReplyException.class, () -> other.command("SET", key, "v"));
            assertThat(moved.code()).isEqualTo("MOVED");
            assertThat(moved.getMessage())
                .isEqualTo("MOVED " + slot + " 127.0.0.1:" + owner.port());
          }
        }
      }
    }
    for (int port : ports) {
      assertThat(refused(port)).as("port %d after close()", port).isTrue();
    }
  }

  @Test
  void sharedIsStartedOnce() {
    RedisCluster a = RedisCluster.shared();
    assertThat(RedisCluster.shared()).isSameAs(a);
    assertThat(a.nodes()).hasSize(3);
    a.close(); // does nothing: the shutdown hook stops it
    assertThat(a.nodeFor("{a}x").command("SET", "{a}x", "1")).isEqualTo("OK");
  }

  private static boolean refused(int port) {
    try {
      new Socket("127.0.0.1", port).close();
      return false;
    } catch (ConnectException e) {
      return true;
    } catch (java.io.IOException e) {
      return false;
    }
  }
}

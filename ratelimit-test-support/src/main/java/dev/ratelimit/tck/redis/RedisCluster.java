package dev.ratelimit.tck.redis;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Redis Cluster of N masters and no replicas, started on loopback by this JVM. Each node is an
 * owned {@link RedisServer} started with {@code --cluster-enabled yes} (its bus port is its port
 * + 10000). The cluster is created without {@code redis-cli}: node {@code i} of {@code n} gets the
 * slots {@code i*16384/n} to {@code (i+1)*16384/n - 1} and config epoch {@code i+1}, node 0 meets
 * the others, and {@link #start(int)} returns once every node reports {@code cluster_state:ok}
 * and knows all N nodes.
 *
 * <pre>{@code
 * try (RedisCluster cluster = RedisCluster.start(3)) {
 *   cluster.nodeFor("{user42}:p").command("SET", "{user42}:p", "1");
 * }
 * }</pre>
 */
public final class RedisCluster implements AutoCloseable {
  /** The number of hash slots. */
  public static final int SLOTS = 16_384;

  private static final long READY_TIMEOUT_MS = 30_000;
  private static RedisCluster shared; // guarded by RedisCluster.class

  private final List<RedisServer> nodes;
  private final int[] firstSlot;
  private final int[] lastSlot;
  private volatile boolean sharedInstance;

  private RedisCluster(List<RedisServer> nodes, int[] firstSlot, int[] lastSlot) {
    this.nodes = List.copyOf(nodes);
    this.firstSlot = firstSlot;
    this.lastSlot = lastSlot;
  }

  /**
   * Starts {@code masters} nodes on free loopback ports and joins them into a cluster; waits at
   * most 30 s for {@code cluster_state:ok} on every node, then fails with every node's {@code
   * CLUSTER INFO}. Nodes already started are stopped when it fails.
   */
  public static RedisCluster start(int masters) {
    if (masters < 1) {
      throw new IllegalArgumentException("masters must be at least 1: " + masters);
    }
    Path binary = RedisServer.binary();
    int major = RedisBinary.major(binary);
    List<RedisServer> nodes = new ArrayList<>();
    try {
      for (int i = 0; i < masters; i++) {
        nodes.add(RedisServer.start(binary, true));
      }
      int[] first = new int[masters];
      int[] last = new int[masters];
      for (int i = 0; i < masters; i++) {
        first[i] = i * SLOTS / masters;
        last[i] = (i + 1) * SLOTS / masters - 1;
        RedisServer node = nodes.get(i);
        if (major >= 7) {
          node.command("CLUSTER", "ADDSLOTSRANGE", first[i], last[i]);
        } else {
          List<Object> args = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
          for (int slot = first[i]; slot <= last[i]; slot++) {
            args.add(slot);
          }
          node.command(args.toArray());
        }
        node.command("CLUSTER", "SET-CONFIG-EPOCH", i + 1);
      }
      for (int i = 1; i < masters; i++) {
        nodes.get(0).command("CLUSTER", "MEET", nodes.get(i).host(), nodes.get(i).port());
      }
      RedisCluster cluster = new RedisCluster(nodes, first, last);
      cluster.awaitOk();
      return cluster;
    } catch (RuntimeException | Error e) {
      for (RedisServer n : nodes) {
        try {
          n.close();
        } catch (RuntimeException suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      throw e;
    }
  }

  /**
   * The cluster of this JVM's tests: {@code start(3)} on the first call, the same instance after
   * that, stopped by a shutdown hook when the JVM exits. Its {@link #close()} does nothing.
   */
  public static synchronized RedisCluster shared() {
    if (shared == null) {
      RedisCluster c = start(3);
      c.sharedInstance = true;
      c.nodes.forEach(RedisServer::markShared);
      shared = c;
    }
    return shared;
  }

  /** The nodes, in slot order: node 0 holds the lowest slots. */
  public List<RedisServer> nodes() {
    return nodes;
  }

  /** {@code redis://127.0.0.1:PORT} for each node, in the order of {@link #nodes()}. */
  public List<String> urls() {
    return nodes.stream().map(RedisServer::url).toList();
  }

  /** The node serving {@code key}'s hash slot (as {@code CLUSTER KEYSLOT} computes it). */
  public RedisServer nodeFor(String key) {
    long slot = (Long) nodes.get(0).command("CLUSTER", "KEYSLOT", key);
    for (int i = 0; i < nodes.size(); i++) {
      if (firstSlot[i] <= slot && slot <= lastSlot[i]) {
        return nodes.get(i);
      }
    }
    throw new IllegalStateException("slot " + slot + " of " + key + " was never assigned");
  }

  /** Stops every node (except for the {@link #shared()} cluster, which the shutdown hook stops). */
  @Override
  public void close() {
    if (sharedInstance) {
      return;
    }
    RedisServer.closeAll(nodes);
  }

  @Override
  public String toString() {
    return "RedisCluster" + urls();
  }

  private void awaitOk() {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(READY_TIMEOUT_MS);
    List<String> infos = new ArrayList<>();
    while (true) {
      infos.clear();
      boolean ok = true;
      for (RedisServer n : nodes) {
        String info = (String) n.command("CLUSTER", "INFO");
        infos.add(n.url() + ":\n" + info);
        ok &= info.lines().anyMatch("cluster_state:ok"::equals)
            && info.lines().anyMatch(("cluster_known_nodes:" + nodes.size())::equals);
      }
      if (ok) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the cluster is not ok after " + READY_TIMEOUT_MS + " ms:\n"
            + String.join("\n", infos));
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for the cluster", e);
      }
    }
  }
}

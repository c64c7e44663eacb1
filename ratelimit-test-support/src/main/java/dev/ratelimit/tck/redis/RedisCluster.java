package dev.ratelimit.tck.redis;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * A Redis Cluster of N masters, optionally with replicas, started on loopback by this JVM. Each
 * node is an owned {@link RedisServer} started with {@code --cluster-enabled yes} (its bus port is
 * its port + 10000). The cluster is created without {@code redis-cli}: master {@code i} of {@code
 * n} gets the slots {@code i*16384/n} to {@code (i+1)*16384/n - 1} and config epoch {@code i+1},
 * node 0 meets the others, each replica is made one with {@code CLUSTER REPLICATE}, and {@link
 * #start(int, int)} returns once every node reports {@code cluster_state:ok}, knows all nodes,
 * and every replica is in sync.
 *
 * <p>Topology changes for tests of what clients do under them: {@link #failover(RedisServer,
 * Duration)} ({@code CLUSTER FAILOVER}), {@link #kill(RedisServer)} and {@link
 * #awaitPromoted(RedisServer, Duration)}, {@link #migrateSlot(int, RedisServer, Duration)}
 * (IMPORTING / MIGRATING, {@code MIGRATE}, {@code SETSLOT NODE}) and {@link #addMaster()}. Who
 * serves a slot is asked of the cluster each time ({@code CLUSTER SLOTS}), so {@link
 * #nodeFor(String)} follows them.
 *
 * <pre>{@code
 * try (RedisCluster cluster = RedisCluster.start(3, 1)) {
 *   RedisServer master = cluster.nodeFor("{user42}:p");
 *   cluster.kill(master);
 *   cluster.awaitPromoted(cluster.replicasOf(master).get(0), Duration.ofSeconds(10));
 * }
 * }</pre>
 */
public final class RedisCluster implements AutoCloseable {
  /** The number of hash slots. */
  public static final int SLOTS = 16_384;
  /** The {@code cluster-node-timeout} of a cluster with replicas: short, so that a failover takes about a second. */
  public static final int REPLICATED_NODE_TIMEOUT_MS = 1_000;

  private static final int DEFAULT_NODE_TIMEOUT_MS = 2_000;
  private static final long READY_TIMEOUT_MS = 30_000;
  private static final int MIGRATE_BATCH = 100;
  private static RedisCluster shared; // guarded by RedisCluster.class

  private final Path binary;
  private final int nodeTimeoutMs;
  private final List<RedisServer> nodes;
  private volatile boolean sharedInstance;

  private RedisCluster(Path binary, int nodeTimeoutMs, List<RedisServer> nodes) {
    this.binary = binary;
    this.nodeTimeoutMs = nodeTimeoutMs;
    this.nodes = new CopyOnWriteArrayList<>(nodes);
  }

  /**
   * Starts {@code masters} nodes on free loopback ports and joins them into a cluster with no
   * replicas; see {@link #start(int, int)}.
   */
  public static RedisCluster start(int masters) {
    return start(masters, 0);
  }

  /**
   * Starts {@code masters} masters and {@code replicasPerMaster} replicas of each on free loopback
   * ports and joins them into a cluster; waits at most 30 s for {@code cluster_state:ok} on every
   * node and for every replica to be in sync, then fails with every node's {@code CLUSTER INFO}.
   * Nodes already started are stopped when it fails. With replicas, {@code cluster-node-timeout}
   * is {@value #REPLICATED_NODE_TIMEOUT_MS} ms (else 2000 ms).
   */
  public static RedisCluster start(int masters, int replicasPerMaster) {
    if (masters < 1) {
      throw new IllegalArgumentException("masters must be at least 1: " + masters);
    }
    if (replicasPerMaster < 0) {
      throw new IllegalArgumentException("replicasPerMaster must be at least 0: " + replicasPerMaster);
    }
    Path binary = RedisServer.binary();
    int major = RedisBinary.major(binary);
    int nodeTimeout = replicasPerMaster > 0 ? REPLICATED_NODE_TIMEOUT_MS : DEFAULT_NODE_TIMEOUT_MS;
    List<RedisServer> nodes = new ArrayList<>();
    try {
      for (int i = 0; i < masters * (1 + replicasPerMaster); i++) {
        nodes.add(RedisServer.start(binary, true, nodeTimeout));
      }
      for (int i = 0; i < masters; i++) {
        int first = i * SLOTS / masters;
        int last = (i + 1) * SLOTS / masters - 1;
        addSlots(nodes.get(i), major, first, last);
        nodes.get(i).command("CLUSTER", "SET-CONFIG-EPOCH", i + 1);
      }
      for (int i = 1; i < nodes.size(); i++) {
        nodes.get(0).command("CLUSTER", "MEET", nodes.get(i).host(), nodes.get(i).port());
      }
      RedisCluster cluster = new RedisCluster(binary, nodeTimeout, nodes);
      if (replicasPerMaster > 0) {
        cluster.await("every node knows every other", () -> nodes.stream().allMatch(n ->
            info(n).contains("cluster_known_nodes:" + nodes.size() + "\r\n")));
        for (int i = masters; i < nodes.size(); i++) {
          RedisServer master = nodes.get((i - masters) % masters);
          String masterId = id(master);
          RedisServer replica = nodes.get(i);
          // the replica may not have heard of its master's id from the bus yet: retry until it has
          cluster.await(replica + " replicates " + master, () -> {
            try {
              replica.command("CLUSTER", "REPLICATE", masterId);
              return true;
            } catch (RedisReplyException e) {
              return false;
            }
          });
        }
      }
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

  /**
   * Every node this cluster started, in the order started: the masters first (node 0 holds the
   * lowest slots), then the replicas, then those {@link #addMaster() added}; killed ones included.
   */
  public List<RedisServer> nodes() {
    return List.copyOf(nodes);
  }

  /** {@code redis://127.0.0.1:PORT} for each node, in the order of {@link #nodes()}. */
  public List<String> urls() {
    return nodes.stream().map(RedisServer::url).toList();
  }

  /** The {@code cluster-node-timeout} of every node, in milliseconds. */
  public int nodeTimeoutMillis() {
    return nodeTimeoutMs;
  }

  /** The master serving {@code key}'s hash slot now, as a running node sees it. */
  public RedisServer nodeFor(String key) {
    return masterOf(slot(key));
  }

  /** {@code key}'s hash slot ({@code CLUSTER KEYSLOT}). */
  public int slot(String key) {
    return ((Long) anyRunning().command("CLUSTER", "KEYSLOT", key)).intValue();
  }

  /** The master serving {@code slot} now, as a running node sees it ({@code CLUSTER SLOTS}). */
  public RedisServer masterOf(int slot) {
    for (Object range : (List<?>) anyRunning().command("CLUSTER", "SLOTS")) {
      List<?> r = (List<?>) range;
      if ((Long) r.get(0) <= slot && slot <= (Long) r.get(1)) {
        return byPort(((Long) ((List<?>) r.get(2)).get(1)).intValue());
      }
    }
    throw new IllegalStateException("slot " + slot + " is not served by any node");
  }

  /** The running nodes that are masters of at least one slot now, as a running node sees it. */
  public List<RedisServer> masters() {
    List<RedisServer> masters = new ArrayList<>();
    for (Object range : (List<?>) anyRunning().command("CLUSTER", "SLOTS")) {
      RedisServer m = byPort(((Long) ((List<?>) ((List<?>) range).get(2)).get(1)).intValue());
      if (!masters.contains(m)) {
        masters.add(m);
      }
    }
    return masters;
  }

  /** The running replicas connected to {@code master} (by its own {@code INFO replication}). */
  public List<RedisServer> replicasOf(RedisServer master) {
    List<RedisServer> replicas = new ArrayList<>();
    for (String line : master.info("replication").lines().toList()) {
      int at = line.indexOf(",port=");
      if (line.startsWith("slave") && at > 0) {
        RedisServer r = byPort(Integer.parseInt(line.substring(at + 6, line.indexOf(',', at + 1))));
        if (r.running()) {
          replicas.add(r);
        }
      }
    }
    return replicas;
  }

  /**
   * A graceful failover: {@code CLUSTER FAILOVER} on {@code replica}, which waits for its master
   * to stop taking writes and to hand over every write, then takes the master's slots; returns
   * once every running node names {@code replica} the master of them, the cluster is ok, and the
   * old master is a replica in sync with it (at most {@code timeout} each).
   */
  public void failover(RedisServer replica, Duration timeout) {
    String oldMasterId = ((String) replica.command("CLUSTER", "NODES")).lines()
        .filter(l -> l.contains("myself")).findFirst().orElseThrow().split(" ")[3];
    replica.command("CLUSTER", "FAILOVER");
    awaitPromoted(replica, timeout);
    for (RedisServer n : nodes) {
      if (n.running() && id(n).equals(oldMasterId)) {
        await(n + " replicates " + replica, timeout.toMillis(), () -> {
          String replication = n.info("replication");
          return replication.contains("role:slave") && replication.contains("master_port:" + replica.port() + "\r\n")
              && replication.contains("master_link_status:up");
        });
      }
    }
  }

  /** Kills {@code node} ({@link RedisServer#kill()}, SIGKILL by its PID): a crash, not a shutdown. */
  public void kill(RedisServer node) {
    requireMember(node);
    node.kill();
  }

  /**
   * Waits until one of {@code replicas} (of one master) is promoted, as {@link
   * #awaitPromoted(RedisServer, Duration)} does for one, and returns it.
   */
  public RedisServer awaitPromoted(List<RedisServer> replicas, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    RedisServer[] promoted = new RedisServer[1];
    await("one of " + replicas + " is a master", timeout.toMillis(), () -> {
      for (RedisServer r : replicas) {
        if (r.running() && r.info("replication").contains("role:master")) {
          promoted[0] = r;
          return true;
        }
      }
      return false;
    });
    awaitPromoted(promoted[0], Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
    return promoted[0];
  }

  /**
   * Waits until {@code replica} is a master, every running node's {@code CLUSTER SLOTS} names it
   * for some slots and no slot is left unserved, and every running node reports {@code
   * cluster_state:ok}; fails after {@code timeout}.
   */
  public void awaitPromoted(RedisServer replica, Duration timeout) {
    requireMember(replica);
    await(replica + " is the master of some slots on every running node", timeout.toMillis(), () -> {
      if (!replica.info("replication").contains("role:master")) {
        return false;
      }
      for (RedisServer n : nodes) {
        if (!n.running()) {
          continue;
        }
        if (!info(n).contains("cluster_state:ok\r\n")) {
          return false;
        }
        boolean names = false;
        for (Object range : (List<?>) n.command("CLUSTER", "SLOTS")) {
          names |= ((Long) ((List<?>) ((List<?>) range).get(2)).get(1)).intValue() == replica.port();
        }
        if (!names) {
          return false;
        }
      }
      return true;
    });
  }

  /**
   * Moves {@code slot} to the master {@code to} while clients keep using it, as {@code redis-cli
   * --cluster reshard} does: {@code to} is set IMPORTING and the owner MIGRATING; the slot's keys
   * move {@value #MIGRATE_BATCH} at a time with {@code MIGRATE ... KEYS} (during which clients get
   * {@code ASK} for keys already moved, and {@code TRYAGAIN} for a multi-key command whose keys are
   * split); then every master is told {@code SETSLOT slot NODE to}. Does nothing when {@code to}
   * serves it already.
   *
   * @param pauseBetweenBatches a pause between two batches of keys (zero for none), so that
   *     traffic meets the slot half-migrated
   */
  public void migrateSlot(int slot, RedisServer to, Duration pauseBetweenBatches) {
    requireMember(to);
    RedisServer from = masterOf(slot);
    if (from.equals(to)) {
      return;
    }
    String fromId = id(from);
    String toId = id(to);
    to.command("CLUSTER", "SETSLOT", slot, "IMPORTING", fromId);
    from.command("CLUSTER", "SETSLOT", slot, "MIGRATING", toId);
    while (true) {
      List<?> keys = (List<?>) from.command("CLUSTER", "GETKEYSINSLOT", slot, MIGRATE_BATCH);
      if (keys.isEmpty()) {
        break;
      }
      List<Object> migrate = new ArrayList<>(List.of("MIGRATE", to.host(), to.port(), "", 0, 5_000, "REPLACE", "KEYS"));
      migrate.addAll(keys);
      from.command(migrate.toArray());
      sleep(pauseBetweenBatches.toMillis());
    }
    // the new owner first, then the old, then the others: as redis-cli does, so that no node
    // sends clients back and forth between the two
    to.command("CLUSTER", "SETSLOT", slot, "NODE", toId);
    from.command("CLUSTER", "SETSLOT", slot, "NODE", toId);
    for (RedisServer m : masters()) {
      if (!m.equals(to) && !m.equals(from)) {
        m.command("CLUSTER", "SETSLOT", slot, "NODE", toId);
      }
    }
  }

  /**
   * Starts a new node on a free loopback port, has a running node meet it, and returns once every
   * running node knows it, it knows them, and it reports {@code cluster_state:ok}. It serves no slot until {@link #migrateSlot} moves some to it.
   */
  public RedisServer addMaster() {
    RedisServer node = RedisServer.start(binary, true, nodeTimeoutMs);
    nodes.add(node);
    anyRunning().command("CLUSTER", "MEET", node.host(), node.port());
    String nodeId = id(node);
    List<String> ids = nodes.stream().filter(RedisServer::running).map(RedisCluster::id).toList();
    await("every running node knows " + node + ", and it knows them", () -> nodes.stream()
        .filter(RedisServer::running).allMatch(n -> ((String) n.command("CLUSTER", "NODES")).contains(nodeId))
        && ids.stream().allMatch(((String) node.command("CLUSTER", "NODES"))::contains)
        && info(node).contains("cluster_state:ok\r\n"));
    return node;
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

  private static void addSlots(RedisServer node, int major, int first, int last) {
    if (major >= 7) {
      node.command("CLUSTER", "ADDSLOTSRANGE", first, last);
    } else {
      List<Object> args = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
      for (int slot = first; slot <= last; slot++) {
        args.add(slot);
      }
      node.command(args.toArray());
    }
  }

  private static String id(RedisServer node) {
    return (String) node.command("CLUSTER", "MYID");
  }

  private static String info(RedisServer node) {
    return (String) node.command("CLUSTER", "INFO");
  }

  private RedisServer byPort(int port) {
    for (RedisServer n : nodes) {
      if (n.port() == port) {
        return n;
      }
    }
    throw new IllegalStateException("no node of " + this + " on port " + port);
  }

  private RedisServer anyRunning() {
    for (RedisServer n : nodes) {
      if (n.running() || !n.owned()) {
        return n;
      }
    }
    throw new IllegalStateException("no node of " + this + " runs");
  }

  private void requireMember(RedisServer node) {
    if (!nodes.contains(node)) {
      throw new IllegalArgumentException(node + " is not a node of " + this);
    }
  }

  private void awaitOk() {
    Map<RedisServer, String> infos = new HashMap<>();
    Supplier<String> report = () -> String.join("\n", infos.entrySet().stream()
        .map(e -> e.getKey().url() + ":\n" + e.getValue()).toList());
    try {
      await("the cluster is ok", READY_TIMEOUT_MS, () -> {
        boolean ok = true;
        for (RedisServer n : nodes) {
          String info = info(n);
          infos.put(n, info);
          ok &= info.lines().anyMatch("cluster_state:ok"::equals)
              && info.lines().anyMatch(("cluster_known_nodes:" + nodes.size())::equals);
          String replication = n.info("replication");
          if (replication.contains("role:slave")) {
            ok &= replication.contains("master_link_status:up");
          }
        }
        return ok;
      });
    } catch (IllegalStateException e) {
      throw new IllegalStateException(e.getMessage() + ":\n" + report.get(), e);
    }
  }

  private void await(String what, BooleanSupplier done) {
    await(what, READY_TIMEOUT_MS, done);
  }

  private static void await(String what, long timeoutMs, BooleanSupplier done) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("not true after " + timeoutMs + " ms: " + what);
      }
      sleep(20);
    }
  }

  private static void sleep(long millis) {
    if (millis <= 0) {
      return;
    }
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for the cluster", e);
    }
  }
}

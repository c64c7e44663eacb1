package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.tck.redis.RedisCluster;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.redisson.config.ReadMode;

/**
 * A Redis Cluster of three masters with a replica each, under a steady load of three limiter
 * instances ({@link TopologyLoad}), through each topology change a deployment sees: a graceful
 * failover, a killed master, slots of the hot keys moved to another master, and a master added.
 * Each test measures and asserts admissions beyond each policy's limit, decisions made by the
 * failure mode, exceptions reaching callers, and the time until every decision comes from Redis
 * again; docs/redis.md quotes these tests.
 */
class RedisTopologyChangeTest {
  static final int INSTANCES = 3;
  static final int THREADS_PER_INSTANCE = 4;
  /** How often the clients re-read the cluster's slots (Redisson's scanInterval). */
  static final int SCAN_INTERVAL_MS = 1_000;
  private static final Duration PROMOTION = Duration.ofSeconds(20);

  private final String prefix = Clients.uniquePrefix();
  private final List<RedissonClient> clients = new ArrayList<>();
  private RedisCluster cluster;

  @AfterEach
  void stop() {
    clients.forEach(RedissonClient::shutdown);
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aGracefulFailoverLosesNoAdmission() {
    cluster = RedisCluster.start(3, 1);
    try (TopologyLoad load = load(b -> b)) {
      RedisServer master = cluster.nodeFor(hashTag(TopologyLoad.key(load.next())));
      RedisServer replica = cluster.replicasOf(master).get(0);
      load.markEvent();
      cluster.failover(replica, PROMOTION);
      TopologyLoad.Result r = load.finish(Duration.ofSeconds(1), 200, Duration.ofSeconds(20));
      System.out.println("graceful failover: " + r);
      assertThat(r.errors()).as("exceptions that reached callers").isEmpty();
      assertThat(r.overAdmitted()).as("admissions beyond a limit: %s", r).isZero();
      assertOnlyRefusedChecksFailed(r);
      assertThat(r.fromRedisAfterEvent()).as("decisions from Redis after the failover").isGreaterThan(200);
      assertThat(r.recovery()).as("until every decision comes from Redis again: %s", r)
          .isLessThan(recoveryBound());
    }
  }

  @Test
  void aKilledMasterLosesAtMostTheChecksInFlight() {
    cluster = RedisCluster.start(3, 1);
    try (TopologyLoad load = load(b -> b)) {
      RedisServer master = cluster.nodeFor(hashTag(TopologyLoad.key(load.next())));
      RedisServer replica = cluster.replicasOf(master).get(0);
      load.markEvent();
      cluster.kill(master);
      cluster.awaitPromoted(replica, PROMOTION);
      TopologyLoad.Result r = load.finish(Duration.ofSeconds(1), 200, Duration.ofSeconds(20));
      System.out.println("killed master: " + r);
      assertThat(r.errors()).as("exceptions that reached callers").isEmpty();
      // asynchronous replication: the promoted replica lacks at most the writes the master had not
      // sent it when it died; every caller waits for its check, so at most one check per caller is
      // in flight, and a check admits at most two policies (checkAll)
      assertThat(r.overAdmitted()).as("admissions beyond a limit: %s", r).isLessThanOrEqualTo(2L * load.callers());
      assertThat(r.byFailureModeAfterEvent()).as("the master's slots went to the failure mode meanwhile")
          .isPositive();
      assertThat(r.fromRedisAfterEvent()).isGreaterThan(200);
      assertThat(r.recovery()).as("until every decision comes from Redis again: %s", r)
          .isLessThan(recoveryBound());
    }
  }

  /**
   * With waitForReplicas(1), a master needs a replica at all times, so two per master: when the
   * master dies, one replica is promoted and the other follows it and acknowledges its writes.
   */
  @Test
  void aKilledMasterLosesNoAdmissionWhenChecksWaitForAReplica() {
    cluster = RedisCluster.start(3, 2);
    try (TopologyLoad load = load(b -> b.waitForReplicas(1, Duration.ofMillis(100)))) {
      RedisServer master = cluster.nodeFor(hashTag(TopologyLoad.key(load.next())));
      List<RedisServer> replicas = cluster.replicasOf(master);
      assertThat(replicas).hasSize(2);
      assertThat(master.info("commandstats")).as("checks wait for a replica").contains("cmdstat_wait:");
      load.markEvent();
      cluster.kill(master);
      RedisServer promoted = cluster.awaitPromoted(replicas, PROMOTION);
      TopologyLoad.Result r = load.finish(Duration.ofSeconds(1), 200, Duration.ofSeconds(25));
      System.out.println("killed master, waiting for a replica: " + r);
      assertThat(r.errors()).as("exceptions that reached callers").isEmpty();
      assertThat(r.overAdmitted()).as("admissions beyond a limit: %s", r).isZero();
      assertThat(cluster.replicasOf(promoted)).as("the other replica follows the new master").hasSize(1);
      assertThat(r.fromRedisAfterEvent()).isGreaterThan(200);
      // and the replica's resync, during which WAIT times out, and the circuit's cool-down after it
      assertThat(r.recovery()).as("until every decision comes from Redis again: %s", r)
          .isLessThan(recoveryBound().plusSeconds(5));
    }
  }

  @Test
  void movingTheHotKeysSlotsToAnotherMasterLosesNoAdmission() {
    cluster = RedisCluster.start(3, 0);
    try (TopologyLoad load = load(b -> b.timeout(ANSWERING), ANSWERING)) {
      load.markEvent();
      List<RedisServer> masters = cluster.masters();
      int moved = 0;
      for (int slot : hotSlots(load)) {
        RedisServer owner = cluster.masterOf(slot);
        cluster.migrateSlot(slot, masters.get((masters.indexOf(owner) + 1) % masters.size()), Duration.ofMillis(5));
        moved++;
      }
      TopologyLoad.Result r = load.finish(Duration.ofSeconds(1), 200, Duration.ofSeconds(20));
      System.out.println("resharding " + moved + " hot slots: " + r);
      assertThat(r.errors()).as("exceptions that reached callers").isEmpty();
      assertThat(r.overAdmitted()).as("admissions beyond a limit: %s", r).isZero();
      assertOnlyRefusedChecksFailed(r);
      assertThat(r.fromRedisAfterEvent()).isGreaterThan(200);
      assertThat(r.recovery()).as("until every decision comes from Redis again: %s", r)
          .isLessThan(recoveryBound());
    }
  }

  @Test
  void aMasterAddedAndGivenTheHotKeysSlotsLosesNoAdmission() {
    cluster = RedisCluster.start(3, 0);
    try (TopologyLoad load = load(b -> b.timeout(ANSWERING), ANSWERING)) {
      load.markEvent();
      RedisServer added = cluster.addMaster();
      Set<Integer> slots = hotSlots(load);
      for (int slot : slots) {
        cluster.migrateSlot(slot, added, Duration.ofMillis(5));
      }
      TopologyLoad.Result r = load.finish(Duration.ofSeconds(1), 200, Duration.ofSeconds(20));
      System.out.println("added master with " + slots.size() + " hot slots: " + r);
      assertThat(cluster.masters()).contains(added);
      assertThat(r.errors()).as("exceptions that reached callers").isEmpty();
      assertThat(r.overAdmitted()).as("admissions beyond a limit: %s", r).isZero();
      assertOnlyRefusedChecksFailed(r);
      assertThat(r.fromRedisAfterEvent()).isGreaterThan(200);
      assertThat(r.recovery()).as("until every decision comes from Redis again: %s", r)
          .isLessThan(recoveryBound());
    }
  }

  /**
   * Redis answered throughout (a redirect to a node the client has not discovered yet is refused
   * at once, and only that slot's checks): the failure mode decided only the checks refused, the
   * circuit breaker never opened and skipped Redis for every other key.
   */
  static void assertOnlyRefusedChecksFailed(TopologyLoad.Result r) {
    assertThat(r.byFailureMode()).as("failure-mode decisions beyond the checks refused: %s", r)
        .isEqualTo(r.backendErrorCount());
  }

  /** The node timeout, Redisson's scan of the slots, and a few seconds for a busy machine. */
  private Duration recoveryBound() {
    return Duration.ofMillis(cluster.nodeTimeoutMillis() + SCAN_INTERVAL_MS).plusSeconds(5);
  }

  /** The slots of the keys being written now and of the next two keys of every stream. */
  private Set<Integer> hotSlots(TopologyLoad load) {
    Set<Integer> slots = new LinkedHashSet<>();
    long n = load.next();
    for (int k = 0; k < 3; k++) {
      for (int s = 0; s < TopologyLoad.STREAMS; s++) {
        slots.add(cluster.slot(hashTag(TopologyLoad.key(n + s + (long) k * TopologyLoad.STREAMS * TopologyLoad.CHECKS_PER_KEY))));
      }
    }
    return slots;
  }

  private String hashTag(String key) {
    return prefix + ":{" + RedisKeys.part(key) + "}";
  }

  private TopologyLoad load(Function<RedisBackend.Builder, RedisBackend.Builder> options) {
    return load(options, null);
  }

  /**
   * The load on limiters of {@code timeout} (null: the default). Where Redis answers throughout (a
   * slot moves, a master joins), a long one: a check slowed past the default by a busy machine,
   * not by the topology, would be the failure mode's, and move the recovery the test measures.
   */
  private TopologyLoad load(Function<RedisBackend.Builder, RedisBackend.Builder> options, Duration timeout) {
    for (int i = 0; i < INSTANCES; i++) {
      clients.add(client(cluster));
    }
    return new TopologyLoad(clients, c -> options.apply(RedisBackend.builder(c).keyPrefix(prefix)).build(),
        THREADS_PER_INSTANCE, timeout).warmUp(2_000);
  }

  /** Long enough that only the topology, never a busy machine, leaves a check to the failure mode. */
  private static final Duration ANSWERING = Duration.ofSeconds(5);

  /** A client as an application instance would have: masters only, the limiter's settings, a 1 s slot scan. */
  static RedissonClient client(RedisCluster cluster) {
    Config config = new Config();
    config.useClusterServers().addNodeAddress(cluster.urls().toArray(String[]::new))
        .setScanInterval(SCAN_INTERVAL_MS).setReadMode(ReadMode.MASTER).setTimeout(1_000).setRetryAttempts(0)
        .setMasterConnectionMinimumIdleSize(2).setMasterConnectionPoolSize(16);
    return Redisson.create(config);
  }
}

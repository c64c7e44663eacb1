package dev.ratelimit.tck.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A master, one replica of it, and Sentinels that monitor them under the name {@value
 * #MASTER_NAME}, all started by this JVM on free loopback ports ({@link RedisServer#builder()}).
 * Each Sentinel's configuration file is written into its own temporary directory. {@link
 * #start(int, String, String)} returns once the replica is in sync and every Sentinel knows the
 * master, the replica and the other Sentinels. By default the Sentinels wait a minute before they
 * call a master down; {@link #start(int, String, String, Duration)} shortens that, for tests of a
 * failover: {@link #killMaster()}, then {@link #awaitPromoted(Duration)}.
 *
 * <pre>{@code
 * try (RedisSentinels group = RedisSentinels.start(1, "data-secret", "sentinel-secret")) {
 *   group.sentinelNodes();               // ["127.0.0.1:PORT"]
 *   group.master().command("GET", "k");  // the test's own client, logged in
 * }
 * }</pre>
 */
public final class RedisSentinels implements AutoCloseable {
  /** The name the Sentinels know the master by. */
  public static final String MASTER_NAME = "ratelimit";

  private static final long READY_TIMEOUT_MS = 30_000;

  private final RedisServer master;
  private final RedisServer replica;
  private final List<RedisServer> sentinels;

  private RedisSentinels(RedisServer master, RedisServer replica, List<RedisServer> sentinels) {
    this.master = master;
    this.replica = replica;
    this.sentinels = List.copyOf(sentinels);
  }

  /**
   * Starts the master, its replica and {@code sentinels} Sentinels (quorum: a majority of them).
   *
   * @param dataPassword the master's and the replica's password ({@code requirepass}, which the
   *     replica and the Sentinels use to reach them), or null for none
   * @param sentinelPassword the Sentinels' own password, or null for none
   * @throws IllegalStateException when the group is not ready within 30 s; every process started
   *     is stopped then
   */
  public static RedisSentinels start(int sentinels, String dataPassword, String sentinelPassword) {
    return start(sentinels, dataPassword, sentinelPassword, Duration.ofMinutes(1));
  }

  /**
   * As {@link #start(int, String, String)}, with Sentinels that call the master down after {@code
   * downAfter} without an answer ({@code down-after-milliseconds}) and then promote the replica
   * (a failover may take {@code failover-timeout}: 10 times {@code downAfter}, from 3 s to 3 min).
   */
  public static RedisSentinels start(int sentinels, String dataPassword, String sentinelPassword,
      Duration downAfter) {
    if (sentinels < 1) {
      throw new IllegalArgumentException("sentinels must be at least 1: " + sentinels);
    }
    List<RedisServer> started = new ArrayList<>();
    try {
      RedisServer master = RedisServer.builder().password(dataPassword).start();
      started.add(master);
      RedisServer.Builder replicaOf = RedisServer.builder().password(dataPassword)
          .args("--replicaof", master.host(), Integer.toString(master.port()));
      if (dataPassword != null) {
        replicaOf.args("--masterauth", dataPassword);
      }
      RedisServer replica = replicaOf.start();
      started.add(replica);
      StringBuilder config = new StringBuilder()
          .append("sentinel monitor ").append(MASTER_NAME).append(' ').append(master.host()).append(' ')
          .append(master.port()).append(' ').append(sentinels / 2 + 1).append('\n')
          .append("sentinel down-after-milliseconds ").append(MASTER_NAME).append(' ')
          .append(downAfter.toMillis()).append('\n')
          .append("sentinel failover-timeout ").append(MASTER_NAME).append(' ')
          .append(Math.max(3_000, Math.min(180_000, 10 * downAfter.toMillis()))).append('\n');
      if (dataPassword != null) {
        config.append("sentinel auth-pass ").append(MASTER_NAME).append(' ').append(dataPassword).append('\n');
      }
      if (sentinelPassword != null) {
        // what a Sentinel sends to the others, which ask for the same password
        config.append("sentinel sentinel-pass ").append(sentinelPassword).append('\n');
      }
      List<RedisServer> group = new ArrayList<>();
      for (int i = 0; i < sentinels; i++) {
        RedisServer sentinel = RedisServer.builder().sentinel(config.toString()).password(sentinelPassword).start();
        started.add(sentinel);
        group.add(sentinel);
      }
      RedisSentinels s = new RedisSentinels(master, replica, group);
      s.awaitReady();
      return s;
    } catch (RuntimeException | Error e) {
      for (RedisServer server : started) {
        try {
          server.close();
        } catch (RuntimeException suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      throw e;
    }
  }

  /** The master. */
  public RedisServer master() {
    return master;
  }

  /** The master's replica. */
  public RedisServer replica() {
    return replica;
  }

  /** The Sentinels. */
  public List<RedisServer> sentinels() {
    return sentinels;
  }

  /**
   * Kills the master ({@link RedisServer#kill()}, SIGKILL by its PID): a crash; the Sentinels
   * notice after their {@code down-after-milliseconds}.
   */
  public void killMaster() {
    master.kill();
  }

  /**
   * Waits until every Sentinel names the replica as the master and the replica says it is one;
   * fails after {@code timeout}.
   */
  public void awaitPromoted(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    List<String> expected = List.of(replica.host(), Integer.toString(replica.port()));
    while (true) {
      boolean promoted = replica.info("replication").contains("role:master");
      for (RedisServer s : sentinels) {
        promoted &= expected.equals(s.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME));
      }
      if (promoted) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(this + ": the replica is not the master after " + timeout);
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for " + this, e);
      }
    }
  }

  /** {@code 127.0.0.1:PORT} of each Sentinel, as Spring Boot's {@code spring.data.redis.sentinel.nodes} takes them. */
  public List<String> sentinelNodes() {
    return sentinels.stream().map(s -> s.host() + ":" + s.port()).toList();
  }

  /** Stops every process, Sentinels first. */
  @Override
  public void close() {
    List<RedisServer> all = new ArrayList<>(sentinels);
    all.add(replica);
    all.add(master);
    RedisServer.closeAll(all);
  }

  @Override
  public String toString() {
    return "RedisSentinels[master " + master.url() + ", replica " + replica.url() + ", sentinels "
        + sentinelNodes() + "]";
  }

  private void awaitReady() {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(READY_TIMEOUT_MS);
    while (true) {
      List<String> missing = new ArrayList<>();
      if (!replica.info("replication").contains("master_link_status:up")) {
        missing.add("the replica is not in sync with the master");
      }
      for (RedisServer s : sentinels) {
        Object master = s.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
        if (!List.of(this.master.host(), Integer.toString(this.master.port())).equals(master)) {
          missing.add(s.url() + " names the master " + master);
        }
        List<?> replicas = (List<?>) s.command("SENTINEL", "REPLICAS", MASTER_NAME);
        if (replicas.size() != 1 || !Integer.toString(replica.port()).equals(field(replicas.get(0), "port"))
            || !"slave".equals(field(replicas.get(0), "flags"))) {
          missing.add(s.url() + " knows the replicas " + replicas);
        }
        List<?> others = (List<?>) s.command("SENTINEL", "SENTINELS", MASTER_NAME);
        if (others.size() != sentinels.size() - 1) {
          missing.add(s.url() + " knows " + others.size() + " other Sentinels");
        }
      }
      if (missing.isEmpty()) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(this + " is not ready after " + READY_TIMEOUT_MS + " ms: " + missing);
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for " + this, e);
      }
    }
  }

  /** A field of a Sentinel's reply about one instance, a flat list of field, value, field, value. */
  private static String field(Object instance, String name) {
    List<?> l = (List<?>) instance;
    for (int i = 0; i + 1 < l.size(); i += 2) {
      if (name.equals(l.get(i))) {
        return String.valueOf(l.get(i + 1));
      }
    }
    return null;
  }
}

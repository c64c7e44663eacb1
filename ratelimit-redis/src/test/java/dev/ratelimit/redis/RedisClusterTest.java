package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.ManualClock;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.tck.redis.RedisCluster;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/** Cluster specifics: keys spread over every master, and a script flushed on one node only. */
class RedisClusterTest {
  private static RedisCluster cluster;
  private static RedissonClient client;
  private final String prefix = Clients.uniquePrefix();

  @BeforeAll
  static void connect() {
    cluster = RedisCluster.shared();
    client = Clients.cluster(cluster.urls());
  }

  @AfterAll
  static void disconnect() {
    client.shutdown();
  }

  @Test
  void aScriptFlushedOnEveryNodeInTurnIsReloadedWhereNeeded() {
    List<Policy> policies = List.of(Policy.of(3, Duration.ofMinutes(1)),
        Policy.of(3, Duration.ofMinutes(1), Algorithm.SLIDING_LOG),
        Policy.of(3, Duration.ofMinutes(1), Algorithm.SLIDING_WINDOW));
    try (RateLimiter limiter = RateLimiter.builder().clock(ManualClock.at(Instant.ofEpochSecond(1_700_000_000L)))
        .backend(RedisBackend.builder(client).keyPrefix(prefix).build()).build()) {
      Set<RedisServer> used = new HashSet<>();
      for (RedisServer node : cluster.nodes()) {
        node.command("SCRIPT", "FLUSH");
        for (int i = 0; i < 30; i++) {
          String key = node.port() + ":user:" + i;
          used.add(cluster.nodeFor(prefix + ":{" + RedisKeys.part(key) + "}"));
          Decision d = limiter.check(key, policies.get(0));
          assertThat(d.isDegraded()).isFalse();
          assertThat(d.remaining()).isEqualTo(2);
          MultiDecision all = limiter.checkAll(key, policies, 3);
          assertThat(all.allowed()).isFalse();
          assertThat(all.decisions()).extracting(Decision::remaining).containsExactly(2L, 3L, 3L);
        }
      }
      assertThat(used).as("the keys covered every master").hasSize(cluster.nodes().size());
    }
  }

  /** A master restarted (by its PID) comes back empty; its keys' next checks succeed, others keep state. */
  @Test
  void aRestartedMasterServesItsSlotsAgain() throws Exception {
    try (RedisCluster own = RedisCluster.start(3)) {
      RedissonClient ownClient = Clients.cluster(own.urls());
      Policy p = Policy.of(3, Duration.ofMinutes(1));
      try (RateLimiter limiter = RateLimiter.builder().clock(ManualClock.at(Instant.ofEpochSecond(1_700_000_000L)))
          .backend(RedisBackend.builder(ownClient).keyPrefix(prefix).timeout(Duration.ofSeconds(2)).build())
          .failureMode(dev.ratelimit.FailureMode.FAIL_CLOSED).build()) {
        RedisServer restarted = own.nodes().get(0);
        String onRestarted = null;
        String elsewhere = null;
        for (int i = 0; onRestarted == null || elsewhere == null; i++) {
          String key = "user-" + i;
          boolean there = own.nodeFor(prefix + ":{" + RedisKeys.part(key) + "}").equals(restarted);
          if (there && onRestarted == null) {
            onRestarted = key;
          } else if (!there && elsewhere == null) {
            elsewhere = key;
          }
        }
        assertThat(limiter.check(onRestarted, p, 2).remaining()).isEqualTo(1);
        assertThat(limiter.check(elsewhere, p, 2).remaining()).isEqualTo(1);
        restarted.restart();
        Decision next = null;
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
          next = limiter.check(onRestarted, p, 1);
          if (!next.isDegraded()) {
            break;
          }
          Thread.sleep(100);
        }
        assertThat(next.isDegraded()).as("the restarted master answers again").isFalse();
        assertThat(next.remaining()).as("its dataset is gone: a fresh state").isEqualTo(2);
        assertThat(limiter.check(elsewhere, p, 1).remaining()).as("other masters kept theirs").isZero();
      } finally {
        ownClient.shutdown();
      }
    }
  }
}

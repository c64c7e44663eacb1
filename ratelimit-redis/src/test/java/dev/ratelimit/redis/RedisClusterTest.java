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
}

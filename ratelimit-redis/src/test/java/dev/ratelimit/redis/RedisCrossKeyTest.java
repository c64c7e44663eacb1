package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.KeyedPolicy;
import dev.ratelimit.ManualClock;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.tck.redis.RedisCluster;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * Checks of pairs of different keys: one atomic script call on a single server whatever the keys'
 * hash slots; in a Cluster one atomic call per hash slot, slot after slot in the order of their
 * first pair, stopping at the first denial (all or nothing per slot only).
 */
class RedisCrossKeyTest {
  private static final Policy ROOMY = Policy.of(5, Duration.ofMinutes(1)).withName("roomy");
  private static final Policy EXHAUSTED = Policy.of(2, Duration.ofMinutes(1), Algorithm.SLIDING_LOG)
      .withName("exhausted");

  private final String prefix = Clients.uniquePrefix();

  private RateLimiter limiter(RedissonClient client) {
    return RateLimiter.builder().clock(ManualClock.at(Instant.ofEpochSecond(1_700_000_000L)))
        .backend(RedisBackend.builder(client).keyPrefix(prefix).timeout(Duration.ofSeconds(10)).build())
        .timeout(Duration.ofSeconds(10)).build();
  }

  private int slot(String key) {
    return RedisKeys.slot(prefix + ":{" + RedisKeys.part(key) + "}");
  }

  /** The first key {@code name-i} whose slot passes {@code wanted}. */
  private String keyWhere(String name, IntPredicate wanted) {
    for (int i = 0; ; i++) {
      String key = name + "-" + i;
      if (wanted.test(slot(key))) {
        return key;
      }
    }
  }

  @Test
  void slotGroupsFollowTheFirstPairOfEachSlot() {
    List<KeyedPolicy> checks = List.of(KeyedPolicy.of("a", ROOMY), KeyedPolicy.of("b", ROOMY),
        KeyedPolicy.of("c", ROOMY), KeyedPolicy.of("d", ROOMY), KeyedPolicy.of("a", EXHAUSTED));
    int[] slots = {7, 3, 7, 9, 7};
    int[][] groups = RedisBackend.slotGroups(checks, c -> slots[checks.indexOf(c)]);
    assertThat(groups).isDeepEqualTo(new int[][] {{0, 2, 4}, {1}, {3}});
  }

  @Nested
  class OnOneServer {
    private static RedisServer server;
    private static RedissonClient client;

    @BeforeAll
    static void connect() {
      server = RedisServer.shared();
      client = Clients.single(server.url());
    }

    @AfterAll
    static void disconnect() {
      client.shutdown();
    }

    /** Keys of different hash slots (several hash tags) in one script: atomic, one EVALSHA. */
    @Test
    void keysOfDifferentSlotsAreOneAtomicCall() {
      try (RateLimiter limiter = limiter(client)) {
        String full = keyWhere("full", s -> true);
        String first = keyWhere("first", s -> s != slot(full));
        String second = keyWhere("second", s -> s != slot(full) && s != slot(first));
        assertThat(limiter.check(full, EXHAUSTED, 2).allowed()).isTrue();
        List<KeyedPolicy> checks = List.of(KeyedPolicy.of(first, ROOMY), KeyedPolicy.of(second, ROOMY),
            KeyedPolicy.of(full, EXHAUSTED));

        long before = evalshaCalls();
        MultiDecision denied = limiter.checkAll(checks, 1);
        assertThat(evalshaCalls() - before).as("one script call").isEqualTo(1);
        assertThat(denied.allowed()).isFalse();
        assertThat(denied.decisions()).extracting(Decision::allowed).containsExactly(true, true, false);
        assertThat(limiter.inspect(first, ROOMY).remaining()).as("nothing consumed").isEqualTo(5);
        assertThat(limiter.inspect(second, ROOMY).remaining()).as("nothing consumed").isEqualTo(5);

        before = evalshaCalls();
        MultiDecision allowed = limiter.checkAll(checks.subList(0, 2), 2);
        assertThat(evalshaCalls() - before).as("one script call").isEqualTo(1);
        assertThat(allowed.allowed()).isTrue();
        assertThat(allowed.decisions()).extracting(Decision::remaining).containsExactly(3L, 3L);
      }
    }

    private long evalshaCalls() {
      String stats = String.valueOf(server.command("INFO", "commandstats"));
      int at = stats.indexOf("cmdstat_evalsha:calls=");
      if (at < 0) {
        return 0;
      }
      int from = at + "cmdstat_evalsha:calls=".length();
      int to = stats.indexOf(',', from);
      return Long.parseLong(stats.substring(from, to));
    }
  }

  @Nested
  class OnACluster {
    private static RedissonClient client;

    @BeforeAll
    static void connect() {
      client = Clients.cluster(RedisCluster.shared().urls());
    }

    @AfterAll
    static void disconnect() {
      client.shutdown();
    }

    /** A later slot's denial leaves an earlier slot's consumption in place: all or nothing per slot only. */
    @Test
    void aDenialInALaterSlotKeepsWhatEarlierSlotsConsumed() {
      try (RateLimiter limiter = limiter(client)) {
        String full = keyWhere("full", s -> true);
        String earlier = keyWhere("earlier", s -> s != slot(full));
        assertThat(limiter.check(full, EXHAUSTED, 2).allowed()).isTrue();

        MultiDecision denied = limiter.checkAll(List.of(KeyedPolicy.of(earlier, ROOMY),
            KeyedPolicy.of(full, EXHAUSTED)), 1);
        assertThat(denied.allowed()).isFalse();
        assertThat(denied.decisions()).extracting(Decision::allowed).containsExactly(true, false);
        assertThat(denied.decisions().get(0).remaining()).isEqualTo(4);
        assertThat(denied.decisions().get(1).retryAfterMicros()).isEqualTo(60_000_000);
        assertThat(limiter.inspect(earlier, ROOMY).remaining()).as("the earlier slot consumed").isEqualTo(4);
      }
    }

    /** A denial in the first slot charges no later slot; their pairs are evaluated without consuming. */
    @Test
    void aDenialInTheFirstSlotChargesNoLaterSlot() {
      try (RateLimiter limiter = limiter(client)) {
        String full = keyWhere("full", s -> true);
        String later = keyWhere("later", s -> s != slot(full));
        String last = keyWhere("last", s -> s != slot(full) && s != slot(later));
        assertThat(limiter.check(full, EXHAUSTED, 2).allowed()).isTrue();
        assertThat(limiter.check(last, ROOMY, 4).allowed()).isTrue();

        MultiDecision denied = limiter.checkAll(List.of(KeyedPolicy.of(full, EXHAUSTED), KeyedPolicy.of(later, ROOMY),
            KeyedPolicy.of(last, ROOMY)), 2);
        assertThat(denied.allowed()).isFalse();
        assertThat(denied.decisions()).extracting(Decision::allowed).containsExactly(false, true, false);
        assertThat(denied.decisions().get(2).remaining()).as("what is left now").isEqualTo(1);
        assertThat(limiter.inspect(later, ROOMY).remaining()).as("not charged").isEqualTo(5);
        assertThat(limiter.inspect(last, ROOMY).remaining()).as("not charged").isEqualTo(1);
      }
    }

    /** Keys that share a slot go in one call: all or nothing among them, whatever their order. */
    @Test
    void keysOfOneSlotAreAllOrNothing() {
      try (RateLimiter limiter = limiter(client)) {
        String full = keyWhere("full", s -> true);
        List<String> sameSlot = new ArrayList<>();
        for (int i = 0; sameSlot.size() < 2; i++) {
          String key = "same-" + i;
          if (slot(key) == slot(full)) {
            sameSlot.add(key);
          }
        }
        assertThat(limiter.check(full, EXHAUSTED, 2).allowed()).isTrue();
        MultiDecision denied = limiter.checkAll(List.of(KeyedPolicy.of(sameSlot.get(0), ROOMY),
            KeyedPolicy.of(sameSlot.get(1), ROOMY), KeyedPolicy.of(full, EXHAUSTED)), 1);
        assertThat(denied.allowed()).isFalse();
        assertThat(limiter.inspect(sameSlot.get(0), ROOMY).remaining()).as("nothing consumed").isEqualTo(5);
        assertThat(limiter.inspect(sameSlot.get(1), ROOMY).remaining()).as("nothing consumed").isEqualTo(5);
      }
    }

    /**
     * A slot whose turn comes after half the backend's timeout is never sent: the first slot's node
     * paused past that point answers (and consumes) late, the second slot is not charged, and the
     * failure mode decides.
     */
    @Test
    void aLaterSlotIsNotSentPastHalfTheBackendsTimeout() {
      RedisCluster cluster = RedisCluster.shared();
      String first = keyWhere("first", s -> true);
      RedisServer paused = cluster.nodeFor(prefix + ":{" + RedisKeys.part(first) + "}");
      String second = null;
      for (int i = 0; second == null; i++) {
        String key = "second-" + i;
        if (!cluster.nodeFor(prefix + ":{" + RedisKeys.part(key) + "}").equals(paused)) {
          second = key;
        }
      }
      try (RateLimiter limiter = RateLimiter.builder().clock(ManualClock.at(Instant.ofEpochSecond(1_700_000_000L)))
          .backend(RedisBackend.builder(client).keyPrefix(prefix).timeout(Duration.ofMillis(1_000)).build())
          .timeout(Duration.ofSeconds(3)).failureMode(dev.ratelimit.FailureMode.FAIL_CLOSED).build()) {
        assertThat(limiter.inspect(first, ROOMY).remaining()).isEqualTo(5); // connections open before the pause
        assertThat(limiter.inspect(second, ROOMY).remaining()).isEqualTo(5);
        paused.command("CLIENT", "PAUSE", "700", "ALL");
        MultiDecision failed = limiter.checkAll(List.of(KeyedPolicy.of(first, ROOMY), KeyedPolicy.of(second, ROOMY)), 1);
        assertThat(failed.allowed()).as("FAIL_CLOSED decides").isFalse();
        assertThat(failed.decisions()).extracting(Decision::remaining).containsExactly(-1L, -1L);
        assertThat(limiter.inspect(first, ROOMY).remaining()).as("the first slot ran, late").isEqualTo(4);
        assertThat(limiter.inspect(second, ROOMY).remaining()).as("the second slot was never sent").isEqualTo(5);
      }
    }

    @Test
    void pairsOfSeveralSlotsThatAllAllowAllConsume() {
      try (RateLimiter limiter = limiter(client)) {
        String a = keyWhere("a", s -> true);
        String b = keyWhere("b", s -> s != slot(a));
        String c = keyWhere("c", s -> s != slot(a) && s != slot(b));
        List<KeyedPolicy> checks = List.of(KeyedPolicy.of(a, ROOMY), KeyedPolicy.of(b, ROOMY),
            KeyedPolicy.of(c, ROOMY), KeyedPolicy.of(a, EXHAUSTED));
        MultiDecision allowed = limiter.checkAllAsync(checks, 2).toCompletableFuture().join();
        assertThat(allowed.allowed()).isTrue();
        assertThat(allowed.decisions()).extracting(Decision::remaining).containsExactly(3L, 3L, 3L, 0L);
        for (KeyedPolicy check : checks) {
          assertThat(limiter.inspect(check.key(), check.policy()).remaining())
              .isEqualTo(check.policy() == ROOMY ? 3 : 0);
        }
      }
    }
  }
}

package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.FailureMode;
import dev.ratelimit.ManualClock;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.spi.NotRoutedException;
import dev.ratelimit.tck.redis.RedisCluster;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * A check whose keys a slot migration has split between two nodes: Redis refuses it with {@code
 * TRYAGAIN}, which runs nothing. The failure mode decides it, the circuit stays closed for every
 * other key, and once the slot has moved the check runs on the state it left.
 */
class SplitKeysDuringMigrationTest {
  private final String prefix = Clients.uniquePrefix();
  private final Policy window = Policy.of(10, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW).withName("w");
  private final Policy gcra = Policy.of(10, Duration.ofMinutes(1), Algorithm.GCRA).withName("g");

  @Test
  void tryAgainIsTheFailureModesAndNeverOpensTheCircuit() {
    List<Throwable> errors = new CopyOnWriteArrayList<>();
    try (RedisCluster cluster = RedisCluster.start(2)) {
      RedissonClient client = Clients.cluster(cluster.urls());
      try (RateLimiter limiter = RateLimiter.builder().clock(ManualClock.at(Instant.ofEpochSecond(1_700_000_000L)))
          .backend(RedisBackend.builder(client).keyPrefix(prefix).timeout(Duration.ofSeconds(2)).build())
          .timeout(Duration.ofSeconds(3)).nearCache(false).failureMode(FailureMode.FAIL_CLOSED)
          .circuitBreaker(3, Duration.ofSeconds(5)).listener(new RateLimitListener() {
            @Override
            public void onBackendError(Throwable error) {
              errors.add(error);
            }
          }).build()) {
        assertThat(limiter.checkAll("user", List.of(window, gcra), 1).allowed()).isTrue();
        RedisKeys keys = new RedisKeys(prefix);
        String windowKey = (String) keys.of("user", window).get(0);
        String gcraKey = (String) keys.of("user", gcra).get(0);
        int slot = cluster.slot(gcraKey);
        RedisServer from = cluster.masterOf(slot);
        RedisServer to = cluster.masters().stream().filter(m -> !m.equals(from)).findFirst().orElseThrow();
        assertThat((Long) from.command("EXISTS", windowKey, gcraKey)).isEqualTo(2);

        // half migrated: one key of the check on each node
        to.command("CLUSTER", "SETSLOT", slot, "IMPORTING", from.command("CLUSTER", "MYID"));
        from.command("CLUSTER", "SETSLOT", slot, "MIGRATING", to.command("CLUSTER", "MYID"));
        from.command("MIGRATE", to.host(), to.port(), gcraKey, 0, 5_000);
        for (int i = 0; i < 5; i++) {
          MultiDecision d = limiter.checkAll("user", List.of(window, gcra), 1);
          assertThat(d.allowed()).isFalse();
          assertThat(d.decisions()).allMatch(Decision::isDegraded);
        }
        assertThat(errors).hasSize(5).allSatisfy(e -> assertThat(e).isInstanceOf(NotRoutedException.class)
            .rootCause().hasMessageStartingWith("TRYAGAIN Multiple keys request during rehashing of slot"));
        assertThat(limiter.circuitState()).isEqualTo(RateLimitListener.CircuitState.CLOSED);
        assertThat(limiter.check("another-user", window).isDegraded()).as("other keys still reach Redis").isFalse();

        // the migration ends: the check runs once, on the state the first one left
        List<Object> migrate = new ArrayList<>(List.of("MIGRATE", to.host(), to.port(), "", 0, 5_000, "KEYS"));
        migrate.addAll((List<?>) from.command("CLUSTER", "GETKEYSINSLOT", slot, 100));
        from.command(migrate.toArray());
        for (RedisServer m : List.of(to, from)) {
          m.command("CLUSTER", "SETSLOT", slot, "NODE", to.command("CLUSTER", "MYID"));
        }
        MultiDecision after = limiter.checkAll("user", List.of(window, gcra), 1);
        assertThat(after.allowed()).isTrue();
        assertThat(after.decisions()).extracting(Decision::remaining).containsExactly(8L, 8L);
      } finally {
        client.shutdown();
      }
    }
  }
}

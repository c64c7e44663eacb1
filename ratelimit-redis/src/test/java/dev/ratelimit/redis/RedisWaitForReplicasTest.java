package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Decision;
import dev.ratelimit.FailureMode;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/** waitForReplicas: an admission is reported once a replica holds it, or the failure mode decides. */
class RedisWaitForReplicasTest {
  private final String prefix = Clients.uniquePrefix();
  private final Policy policy = Policy.of(5, Duration.ofMinutes(1)).withName("api");
  private final ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));

  @Test
  void aCheckReturnsOnceTheReplicaHoldsItsWrites() {
    try (RedisServer master = RedisServer.start();
        RedisServer replica = RedisServer.builder().args("--replicaof", master.host(), Integer.toString(master.port()))
            .start()) {
      awaitInSync(replica);
      RedissonClient client = Clients.single(master.url());
      try (RateLimiter limiter = limiter(client, 1, FailureMode.FAIL_CLOSED)) {
        for (int i = 0; i < 20; i++) {
          String key = "user-" + i;
          Decision d = limiter.check(key, policy);
          assertThat(d.isDegraded()).isFalse();
          assertThat(d.remaining()).isEqualTo(4);
          // no wait here: WAIT returned only once the replica had applied the script's writes
          assertThat((List<?>) replica.command("KEYS", prefix + ":{" + RedisKeys.part(key) + "}*"))
              .as("on the replica as soon as the check returned").hasSize(1);
        }
        assertThat(limiter.inspect("user-0", policy).remaining()).isEqualTo(4);
        assertThat(master.info("commandstats")).contains("cmdstat_wait:calls=20,");
      } finally {
        client.shutdown();
      }
    }
  }

  @Test
  void withoutTheReplicasAnAdmissionIsTheFailureModesAndAnInspectionDoesNotWait() {
    RedissonClient client = Clients.single(RedisServer.shared().url()); // no replica
    List<Throwable> errors = new CopyOnWriteArrayList<>();
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).nearCache(false)
        .backend(RedisBackend.builder(client).keyPrefix(prefix).waitForReplicas(1, Duration.ofMillis(20)).build())
        .failureMode(FailureMode.FAIL_CLOSED).circuitBreaker(0, Duration.ofSeconds(1))
        .listener(new RateLimitListener() {
          @Override
          public void onBackendError(Throwable error) {
            errors.add(error);
          }
        }).build()) {
      Decision d = limiter.check("k", policy);
      assertThat(d.allowed()).isFalse();
      assertThat(d.isDegraded()).as("decided by FAIL_CLOSED").isTrue();
      assertThat(errors).singleElement().satisfies(e -> assertThat(e).hasMessageContaining(
          "0 of the 1 replicas it waits for acknowledged its writes within 20 ms (waitForReplicas)"));
      Decision now = limiter.inspect("k", policy);
      assertThat(now.isDegraded()).isFalse();
      assertThat(now.remaining()).as("the check ran on the master and counts there").isEqualTo(4);
    } finally {
      client.shutdown();
    }
  }

  @Test
  void theWaitMustEndBeforeTheCallsTimeout() {
    RedissonClient client = Clients.single(RedisServer.shared().url());
    try {
      assertThatThrownBy(() -> RedisBackend.builder(client).timeout(Duration.ofMillis(100))
          .waitForReplicas(1, Duration.ofMillis(100)).build())
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("waitForReplicas timeout (PT0.1S) must be shorter than the backend's timeout (PT0.1S)");
      assertThatThrownBy(() -> RedisBackend.builder(client).waitForReplicas(-1, Duration.ofMillis(10)))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("was -1");
      assertThatThrownBy(() -> RedisBackend.builder(client).waitForReplicas(1, Duration.ZERO))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("timeout must be positive");
    } finally {
      client.shutdown();
    }
  }

  private RateLimiter limiter(RedissonClient client, int replicas, FailureMode mode) {
    return RateLimiter.builder().clock(clock).nearCache(false).failureMode(mode)
        .backend(RedisBackend.builder(client).keyPrefix(prefix).timeout(Duration.ofSeconds(2))
            .waitForReplicas(replicas, Duration.ofSeconds(1)).build())
        .timeout(Duration.ofSeconds(3)).build();
  }

  private static void awaitInSync(RedisServer replica) {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (!replica.info("replication").contains("master_link_status:up")) {
      assertThat(System.nanoTime() < deadline).as("the replica is in sync within 20 s").isTrue();
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    }
  }
}

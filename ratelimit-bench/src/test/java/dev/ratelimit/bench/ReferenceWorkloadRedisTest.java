package dev.ratelimit.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.bench.ReferenceWorkload.Row;
import dev.ratelimit.bench.ReferenceWorkload.Workload;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.redisson.api.RedissonClient;

/**
 * A Redis row of the reference workload admits exactly what the memory row admits. The workload
 * is ReferenceWorkload's, made smaller so that it runs in a few seconds while about half of its
 * checks are denied: 20,000 checks over 100 keys, 10 per 10 s, 5 ms per check (100 s of manual
 * clock, ten sliding-window edges; real time stays far behind the manual clock, so Redis TTLs
 * never matter).
 */
class ReferenceWorkloadRedisTest {
  static final Workload SMALL = new Workload(20_000, 100, 5_000, 10, Duration.ofSeconds(10));

  @Test
  @Timeout(180) // a hang guard only: 20,000 round trips on a busy machine take far less
  void redisRowAllowsExactlyWhatTheMemoryRowAllows() {
    Algorithm algorithm = Algorithm.SLIDING_WINDOW;
    Row memory = ReferenceWorkload.run(SMALL, "memory", InMemoryBackend::create, algorithm);
    try (RedisServer server = RedisServer.start()) {
      RedissonClient redisson = BenchRedis.single(server.url());
      try {
        // 5 s, not the default 250 ms: on a busy machine a slow answer must not become the failure mode's
        Row redis = ReferenceWorkload.run(SMALL, "redis",
            ReferenceWorkload.redis(redisson, BenchRedis.newPrefix()), algorithm, Duration.ofSeconds(5));

        // the workload discriminates: a good share of the checks is denied
        assertThat(memory.allowedPercent()).isBetween(40.0, 70.0);
        assertThat(redis.degraded()).as("decisions made by the failure mode").isZero();
        assertThat(redis.allowed()).as("allowed on Redis vs in memory").isEqualTo(memory.allowed());
        assertThat(ReferenceWorkload.mismatches(List.of(memory, redis))).isEmpty();
      } finally {
        BenchRedis.shutdown(redisson);
      }
    }
  }

  @Test
  void mismatchesReportsADifferenceAndDegradedDecisions() {
    Row memory = new Row("memory", Algorithm.GCRA, 900, 1_000, 0, 0, 1, 1, 1);
    Row same = new Row("redis", Algorithm.GCRA, 900, 1_000, 0, 0.5, 1, 1, 1);
    Row off = new Row("cluster", Algorithm.GCRA, 901, 1_000, 0, 0.5, 1, 1, 1);
    Row degraded = new Row("redis", Algorithm.GCRA, 900, 1_000, 3, 0.5, 1, 1, 1);

    assertThat(ReferenceWorkload.mismatches(List.of(memory, same))).isEmpty();
    assertThat(ReferenceWorkload.mismatches(List.of(memory, off)))
        .singleElement().asString().contains("cluster GCRA", "+1 checks");
    assertThat(ReferenceWorkload.mismatches(List.of(memory, degraded)))
        .singleElement().asString().contains("3 decisions");
  }
}

package dev.ratelimit.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Part of {@link RateLimiterContract}: The asynchronous forms, long runs without drift, and algorithms that admit alike. */
abstract class LongRunContract extends CheckAllContract {
  // ---------------------------------------------------------------- async

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void checkAsyncAnswersAsCheckDoes(Algorithm algorithm) throws Exception {
    Policy p = policy(algorithm, 3, Duration.ofSeconds(3));
    List<Decision> async = new ArrayList<>();
    List<Decision> sync = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      async.add(limiter.checkAsync(key("async"), p, 1).toCompletableFuture().get());
      sync.add(limiter.check(key("sync"), p, 1));
      advanceMicros(150_000);
    }
    assertThat(async).isEqualTo(sync);
    assertThat(async).extracting(Decision::allowed).containsExactly(true, true, true, false, false);
  }

  // ---------------------------------------------------------------- long runs, equivalences

  /**
   * A day of overload (each denied check is retried at exactly its retryAfter) admits
   * {@code B + L·elapsed/W} ± 1, with W/L not a whole number of microseconds.
   */
  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA", "LEAKY_BUCKET", "SLIDING_LOG"})
  void aDayOfOverloadDoesNotDrift(Algorithm algorithm) {
    long limit = 7;
    Duration window = Duration.ofSeconds(100); // T = 14,285,714.29 µs
    long burst = algorithm.usesBurst() ? 3 : limit;
    Policy p = policy(algorithm, limit, window).withBurst(burst);
    String k = key("drift");
    SplittableRandom random = new SplittableRandom(11);
    long elapsed = Duration.ofDays(1).toNanos() / 1_000;
    long end = micros(Duration.between(Instant.EPOCH, START)) + elapsed;
    long admitted = 0;
    for (int checks = 0; ; checks++) {
      assertThat(checks).as("checks in the run: each denial's retryAfter must let the next pass")
          .isLessThan(200_000);
      Decision d = limiter.check(k, p);
      if (d.allowed()) {
        admitted++;
        if (algorithm.usesBurst()) { // a bucket absorbs gaps shorter than T; a log would lose them
          advanceMicros(random.nextLong(2_000_000));
        }
      } else {
        advanceMicros(micros(d.retryAfter()));
      }
      if (micros(Duration.between(Instant.EPOCH, clock.instant())) > end) {
        break;
      }
    }
    long expected = burst + limit * elapsed / micros(window);
    assertThat(admitted).isBetween(expected - 1, expected + 1);
  }

  /** TOKEN_BUCKET, GCRA and LEAKY_BUCKET with the same burst give the same answers on any trace. */
  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3})
  void gcraAndTokenBucketAdmitIdenticalArrivals(long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    Policy base = Policy.of(13, Duration.ofMillis(7_777)).withBurst(6);
    Policy gcra = base.withAlgorithm(Algorithm.GCRA);
    Policy bucket = base.withAlgorithm(Algorithm.TOKEN_BUCKET);
    Policy leaky = base.withAlgorithm(Algorithm.LEAKY_BUCKET);
    int allowed = 0;
    for (int i = 0; i < 1_000; i++) {
      long cost = 1 + random.nextInt(3);
      Decision g = limiter.check(key("g"), gcra, cost);
      Decision b = limiter.check(key("b"), bucket, cost);
      Decision l = limiter.check(key("l"), leaky, cost);
      assertThat(b.allowed()).as("arrival %d", i).isEqualTo(g.allowed());
      assertThat(l.allowed()).as("arrival %d", i).isEqualTo(g.allowed());
      assertThat(b.remaining()).isEqualTo(g.remaining());
      assertThat(b.retryAfter()).isEqualTo(g.retryAfter());
      assertThat(b.resetAfter()).isEqualTo(g.resetAfter());
      allowed += g.allowed() ? 1 : 0;
      advanceMicros(random.nextInt(10) == 0 ? random.nextLong(5_000_000) : random.nextLong(400_000));
    }
    assertThat(allowed).as("the trace mixes allowed and denied").isBetween(200, 900);
  }
}

package dev.ratelimit.bench;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@code RateLimiter.check} and {@code tryAcquire} on the in-memory backend, on one hot key or
 * round-robin over many keys, with the system clock. Run with {@code -t 1} and {@code -t 2} for
 * one and two threads, and {@code -prof gc} for allocation per check.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class CheckBenchmark {

  /** The limiter and keys, shared by the benchmark's threads. */
  @State(Scope.Benchmark)
  public static class Limiter {
    @Param({"1", "1000"})
    int keys;

    @Param({"GCRA", "TOKEN_BUCKET", "FIXED_WINDOW", "SLIDING_WINDOW", "SLIDING_LOG", "LEAKY_BUCKET"})
    Algorithm algorithm;

    RateLimiter limiter;
    Policy policy;
    String[] names;

    @Setup(Level.Trial)
    public void setUp() {
      limiter = RateLimiter.inMemory();
      // high enough that most checks are allowed: the allowed path does the most work
      policy = Policy.of(1_000_000, Duration.ofSeconds(1), algorithm);
      names = new String[keys];
      for (int i = 0; i < keys; i++) {
        names[i] = "user:" + i;
      }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      limiter.close();
    }
  }

  /** Each thread's position in the key list. */
  @State(Scope.Thread)
  public static class Cursor {
    int next;
  }

  @Benchmark
  public Decision check(Limiter state, Cursor cursor) {
    return state.limiter.check(nextKey(state, cursor), state.policy);
  }

  /** The same checks through {@code tryAcquire}: the answer alone, no {@code Decision} built. */
  @Benchmark
  public boolean tryAcquire(Limiter state, Cursor cursor) {
    return state.limiter.tryAcquire(nextKey(state, cursor), state.policy);
  }

  /** This thread's next key, round-robin. */
  private static String nextKey(Limiter state, Cursor cursor) {
    String[] names = state.names;
    int i = cursor.next;
    cursor.next = i + 1 == names.length ? 0 : i + 1;
    return names[i];
  }
}

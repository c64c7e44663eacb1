package dev.ratelimit.bench;

import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.spring.RateLimitObservation;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
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
 * What {@link RateLimitObservation} costs a check on the in-memory backend (one hot key, allowed):
 * <ul>
 *   <li>{@code none}: the limiter alone, no listener. What the starter builds without an
 *       ObservationRegistry bean, or with one that has no handler (it then adds nothing);</li>
 *   <li>{@code wrapped-noop}: that limiter in the observing wrapper, with {@link
 *       ObservationRegistry#NOOP}: the wrapper's own cost when off;</li>
 *   <li>{@code listener}: the limiter with the outcomes listener, not wrapped: with any listener
 *       the limiter leaves its shortest path and builds each decision;</li>
 *   <li>{@code listener-wrapped-noop}: both, with {@link ObservationRegistry#NOOP};</li>
 *   <li>{@code handler}: both, with a registry of one handler that does nothing: the
 *       observation itself, on.</li>
 * </ul>
 * Run: {@code java -jar ratelimit-bench/target/benchmarks.jar ObservationBenchmark -f 3 -wi 3 -i 5 -t 1}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(3)
@State(Scope.Benchmark)
public class ObservationBenchmark {
  @Param({"none", "wrapped-noop", "listener", "listener-wrapped-noop", "handler"})
  String setup;

  RateLimiter limiter;
  final Policy policy = Policy.of(1_000_000_000L, Duration.ofSeconds(1)).withName("api");

  @Setup(Level.Trial)
  public void setUp() {
    limiter = switch (setup) {
      case "none" -> RateLimiter.inMemory();
      case "wrapped-noop" -> RateLimitObservation.observe(RateLimiter.inMemory(), ObservationRegistry.NOOP);
      case "listener" -> RateLimiter.builder().listener(RateLimitObservation.outcomes()).build();
      case "listener-wrapped-noop" -> observed(ObservationRegistry.NOOP);
      case "handler" -> {
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new ObservationHandler<Observation.Context>() {
          @Override
          public boolean supportsContext(Observation.Context context) {
            return true;
          }
        });
        yield observed(registry);
      }
      default -> throw new IllegalArgumentException("setup " + setup);
    };
  }

  private static RateLimiter observed(ObservationRegistry registry) {
    return RateLimitObservation.observe(RateLimiter.builder().listener(RateLimitObservation.outcomes()).build(),
        registry);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    limiter.close();
  }

  @Benchmark
  public Decision check() {
    return limiter.check("user:42", policy);
  }
}

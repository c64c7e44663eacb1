package dev.ratelimit.spring;

import dev.ratelimit.FailureMode;
import dev.ratelimit.Policy;
import dev.ratelimit.spi.Backend;
import java.time.InstantSource;
import java.util.Objects;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The health of the limiter's backend, as {@code ratelimit} in {@code /actuator/health}: UP when
 * the backend answers an inspection of a probe key (for Redis: a script round trip within the
 * backend's own timeout). When it does not, the status follows the failure mode: with {@link
 * FailureMode#FAIL_CLOSED} the application denies every limited request, so DOWN with the error;
 * with {@link FailureMode#FAIL_OPEN} or {@link FailureMode#LOCAL_FALLBACK} it keeps serving, so UP,
 * with {@code backendUp: false}, the error and the failure mode in the details: a load balancer
 * reading {@code /actuator/health} would otherwise take every instance out at once, all sharing the
 * one Redis. The probe consumes nothing and writes nothing. Details name the backend kind
 * ({@code redis}, {@code memory}, or the class).
 */
public final class RateLimitHealthIndicator implements HealthIndicator {
  static final String PROBE_KEY = "ratelimit:health";
  private static final Policy PROBE = Policy.parse("1/1s").withName("health");

  private final Backend backend;
  private final InstantSource clock;
  private final FailureMode failureMode;

  /** A health indicator probing {@code backend}; DOWN whenever it fails (as under FAIL_CLOSED). */
  public RateLimitHealthIndicator(Backend backend, InstantSource clock) {
    this(backend, clock, FailureMode.FAIL_CLOSED);
  }

  /** A health indicator probing {@code backend}, for a limiter whose failure mode is {@code failureMode}. */
  public RateLimitHealthIndicator(Backend backend, InstantSource clock, FailureMode failureMode) {
    this.backend = Objects.requireNonNull(backend, "backend");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.failureMode = Objects.requireNonNull(failureMode, "failureMode");
  }

  @Override
  public Health health() {
    Health.Builder health;
    long started = System.nanoTime();
    try {
      backend.inspect(PROBE_KEY, PROBE, clock.millis() * 1_000L);
      health = Health.up().withDetail("backendUp", true);
    } catch (RuntimeException e) {
      health = (failureMode == FailureMode.FAIL_CLOSED ? Health.down(e) : Health.up().withException(e))
          .withDetail("backendUp", false)
          .withDetail("failureMode", failureMode.name());
    }
    return health
        .withDetail("backend", kind(backend))
        .withDetail("remote", backend.isRemote())
        .withDetail("probeMillis", (System.nanoTime() - started) / 1_000_000L)
        .build();
  }

  static String kind(Backend backend) {
    String name = backend.getClass().getSimpleName();
    if (name.equals("RedisBackend")) {
      return "redis";
    }
    if (name.equals("InMemoryBackend")) {
      return "memory";
    }
    return backend.getClass().getName();
  }
}

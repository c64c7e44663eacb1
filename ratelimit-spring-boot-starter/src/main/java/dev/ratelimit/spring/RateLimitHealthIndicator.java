package dev.ratelimit.spring;

import dev.ratelimit.Policy;
import dev.ratelimit.spi.Backend;
import java.time.InstantSource;
import java.util.Objects;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The health of the limiter's backend, as {@code ratelimit} in {@code /actuator/health}: UP when
 * the backend answers an inspection of a probe key (for Redis: a script round trip within the
 * backend's own timeout), DOWN with the error otherwise. The probe consumes nothing and writes
 * nothing. Details name the backend kind ({@code redis}, {@code memory}, or the class).
 */
public final class RateLimitHealthIndicator implements HealthIndicator {
  static final String PROBE_KEY = "ratelimit:health";
  private static final Policy PROBE = Policy.parse("1/1s").withName("health");

  private final Backend backend;
  private final InstantSource clock;

  /** A health indicator probing {@code backend} at the time {@code clock} gives. */
  public RateLimitHealthIndicator(Backend backend, InstantSource clock) {
    this.backend = Objects.requireNonNull(backend, "backend");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  @Override
  public Health health() {
    Health.Builder health;
    long started = System.nanoTime();
    try {
      backend.inspect(PROBE_KEY, PROBE, clock.millis() * 1_000L);
      health = Health.up();
    } catch (RuntimeException e) {
      health = Health.down(e);
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

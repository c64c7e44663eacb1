package dev.ratelimit.spring;

import dev.ratelimit.FailureMode;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimitListener.CircuitState;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.spi.Command;
import java.time.InstantSource;
import java.util.Objects;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The health of the limiter's backend, as {@code ratelimit} in {@code /actuator/health}: UP when
 * the backend answers an inspection of a probe key (for Redis: a script round trip within the
 * backend's own timeout) and the limiter's circuit is closed. Otherwise the status follows the
 * failure mode: with {@link FailureMode#FAIL_CLOSED} the application denies every limited request
 * (the backend fails, or the open circuit skips it), so DOWN; with {@link FailureMode#FAIL_OPEN}
 * or {@link FailureMode#LOCAL_FALLBACK} it keeps serving, so UP, with {@code backendUp: false}: a
 * load balancer reading {@code /actuator/health} would otherwise take every instance out at once,
 * all sharing the one Redis. The probe consumes nothing and writes nothing.
 *
 * <p>Details, fit for an endpoint anyone may read: {@code backend} (its kind: {@code redis},
 * {@code memory}, or the class), {@code remote}, {@code backendUp}, {@code failureMode}, {@code
 * circuit} (the limiter's circuit breaker: {@code CLOSED}, {@code OPEN}, {@code HALF_OPEN}; when
 * the limiter is known) and {@code probeMillis}. The probe's error (its exception class and
 * message, which for Redis name the server's host and port) is added only when sensitive details
 * are asked for ({@code ratelimit.health.show-sensitive-details=true}): a health indicator cannot
 * tell who is asking, and Boot's {@code show-details} shows an indicator's details to every caller
 * it shows any to.
 */
public final class RateLimitHealthIndicator implements HealthIndicator {
  static final String PROBE_KEY = "ratelimit:health";
  private static final Policy PROBE = Policy.parse("1/1s").withName("health");

  private final Backend backend;
  private final InstantSource clock;
  private final FailureMode failureMode;
  /** The limiter whose circuit is reported; null when not known. */
  private final RateLimiter limiter;
  private final boolean sensitiveDetails;

  /** A health indicator probing {@code backend}; DOWN whenever it fails (as under FAIL_CLOSED). */
  public RateLimitHealthIndicator(Backend backend, InstantSource clock) {
    this(backend, clock, FailureMode.FAIL_CLOSED);
  }

  /** A health indicator probing {@code backend}, for a limiter whose failure mode is {@code failureMode}. */
  public RateLimitHealthIndicator(Backend backend, InstantSource clock, FailureMode failureMode) {
    this(backend, clock, failureMode, null, false);
  }

  /**
   * A health indicator probing {@code backend} for {@code limiter}, whose failure mode and circuit
   * it reports; the probe's error among the details only when {@code sensitiveDetails}.
   */
  public RateLimitHealthIndicator(Backend backend, InstantSource clock, RateLimiter limiter, boolean sensitiveDetails) {
    this(backend, clock, Objects.requireNonNull(limiter, "limiter").failureMode(), limiter, sensitiveDetails);
  }

  private RateLimitHealthIndicator(Backend backend, InstantSource clock, FailureMode failureMode, RateLimiter limiter,
      boolean sensitiveDetails) {
    this.backend = Objects.requireNonNull(backend, "backend");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.failureMode = Objects.requireNonNull(failureMode, "failureMode");
    this.limiter = limiter;
    this.sensitiveDetails = sensitiveDetails;
  }

  @Override
  public Health health() {
    long started = System.nanoTime();
    RuntimeException error = null;
    try {
      backend.execute(new Command.Inspect(PROBE_KEY, PROBE, 1, clock.millis() * 1_000L));
    } catch (RuntimeException e) {
      error = e;
    }
    CircuitState circuit = limiter == null ? CircuitState.CLOSED : limiter.circuitState();
    boolean deciding = error == null && circuit == CircuitState.CLOSED;
    Health.Builder health = deciding || failureMode != FailureMode.FAIL_CLOSED ? Health.up() : Health.down();
    if (error != null && sensitiveDetails) {
      health.withException(error);
    }
    health.withDetail("backend", kind(backend))
        .withDetail("remote", backend.isRemote())
        .withDetail("backendUp", error == null)
        .withDetail("failureMode", failureMode.name());
    if (limiter != null) {
      health.withDetail("circuit", circuit.name());
    }
    return health.withDetail("probeMillis", (System.nanoTime() - started) / 1_000_000L).build();
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

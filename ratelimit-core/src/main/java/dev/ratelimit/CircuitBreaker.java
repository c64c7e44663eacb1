package dev.ratelimit;

import dev.ratelimit.RateLimitListener.CircuitState;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * A consecutive-failure circuit breaker around the backend, on a nanosecond clock (it measures real
 * outages, so never the limiter's {@link java.time.InstantSource}).
 *
 * <p>CLOSED: every call goes to the backend; {@code failureThreshold} failures in a row OPEN it.
 * OPEN: calls are refused (the failure mode decides) for the current probe interval, then the next
 * call moves it to HALF_OPEN and is let through as the one probe. HALF_OPEN: other calls are
 * refused while the probe runs; the probe's success CLOSES the breaker, its failure OPENS it again.
 * The probe interval starts at {@link #FIRST_PROBE_INTERVAL} (or {@code maxInterval} if shorter) when
 * the breaker opens from CLOSED, and doubles after each failed probe up to {@code maxInterval}: a
 * short outage (a Redis restart) is noticed within about as long as it lasted, a long one costs a
 * probe per {@code maxInterval}. A probe that never reports (it should not happen: every permit is
 * settled) is replaced by a new one after {@code maxInterval}. Results of calls let through while
 * CLOSED that arrive once the breaker has left CLOSED are ignored: only the probe decides.
 *
 * <p>A threshold of 0 disables it: every call is let through and nothing is tracked.
 * Thread-safe; the CLOSED fast path is one volatile read.
 */
final class CircuitBreaker {
  /** The permit of a refused call. */
  static final long REFUSED = -1;
  /** The permit of a call let through while CLOSED (or when disabled). */
  static final long CALL = 0;

  /** The interval before the first probe of an outage: short, so that a quick restart is seen at once. */
  static final Duration FIRST_PROBE_INTERVAL = Duration.ofMillis(100);

  private static final System.Logger LOG = System.getLogger(RateLimiter.class.getName());

  private final int failureThreshold;
  private final long maxIntervalNanos;
  private final long firstIntervalNanos;
  private final Duration maxInterval;
  private final LongSupplier nanoTime;
  private final RateLimitListener listener;

  private volatile CircuitState state = CircuitState.CLOSED;
  /** While OPEN: the nanoTime from which a probe may go. */
  private volatile long probeAllowedAt;
  private volatile int consecutiveFailures; // written under this
  private long probeId; // guarded by this; the permit of the probe in flight, or 0
  private long probeStartedAt; // guarded by this
  private long intervalNanos; // guarded by this; the interval OPEN waits now
  private long probes; // guarded by this

  CircuitBreaker(int failureThreshold, Duration maxInterval, LongSupplier nanoTime, RateLimitListener listener) {
    this.failureThreshold = failureThreshold;
    this.maxInterval = maxInterval;
    this.maxIntervalNanos = failureThreshold == 0 ? 0 : maxInterval.toNanos();
    this.firstIntervalNanos = Math.min(FIRST_PROBE_INTERVAL.toNanos(), maxIntervalNanos);
    this.nanoTime = nanoTime;
    this.listener = listener;
  }

  /** The state now. */
  CircuitState state() {
    return state;
  }

  /**
   * Asks to call the backend: {@link #REFUSED} (the failure mode decides instead), {@link #CALL},
   * or a positive probe permit. Every permit other than REFUSED must be settled with
   * {@link #onResult} or {@link #release}.
   */
  long tryAcquire() {
    CircuitState s = state;
    if (s == CircuitState.CLOSED) {
      return CALL;
    }
    if (s == CircuitState.OPEN && nanoTime.getAsLong() - probeAllowedAt < 0) {
      return REFUSED;
    }
    synchronized (this) {
      long now = nanoTime.getAsLong();
      switch (state) {
        case CLOSED:
          return CALL;
        case OPEN:
          if (now - probeAllowedAt < 0) {
            return REFUSED;
          }
          moveTo(CircuitState.HALF_OPEN);
          return startProbe(now);
        default: // HALF_OPEN
          if (probeId != 0 && now - probeStartedAt < maxIntervalNanos) {
            return REFUSED;
          }
          return startProbe(now);
      }
    }
  }

  /** Settles a permit with the call's outcome. */
  void onResult(long permit, boolean success) {
    if (permit == REFUSED || failureThreshold == 0) {
      return;
    }
    if (permit == CALL) {
      if (success) {
        if (consecutiveFailures != 0) {
          synchronized (this) {
            consecutiveFailures = 0;
          }
        }
        return;
      }
      synchronized (this) {
        if (state == CircuitState.CLOSED && ++consecutiveFailures >= failureThreshold) {
          open();
        }
      }
      return;
    }
    synchronized (this) {
      if (state != CircuitState.HALF_OPEN || permit != probeId) {
        return; // a probe that was replaced
      }
      probeId = 0;
      if (success) {
        consecutiveFailures = 0;
        moveTo(CircuitState.CLOSED);
      } else {
        open();
      }
    }
  }

  private long startProbe(long now) {
    probeId = ++probes;
    probeStartedAt = now;
    return probeId;
  }

  private void open() {
    CircuitState from = state;
    // from CLOSED an outage starts: probe soon; after a failed probe, wait twice as long, up to the maximum
    intervalNanos = from == CircuitState.CLOSED ? firstIntervalNanos : Math.min(2 * intervalNanos, maxIntervalNanos);
    probeAllowedAt = nanoTime.getAsLong() + intervalNanos;
    moveTo(CircuitState.OPEN);
    if (from == CircuitState.CLOSED) {
      LOG.log(Level.WARNING, "rate limiter backend failed " + failureThreshold
          + " times in a row: circuit OPEN, the failure mode decides until a call probing the backend "
          + "succeeds (the first after " + Duration.ofNanos(firstIntervalNanos) + ", then at intervals doubling up to "
          + maxInterval + ")");
    }
  }

  private void moveTo(CircuitState to) {
    CircuitState from = state;
    if (from == to) {
      return;
    }
    state = to;
    if (to == CircuitState.CLOSED) {
      LOG.log(Level.INFO, "rate limiter backend answered again: circuit CLOSED");
    }
    listener.onCircuitStateChange(from, to);
  }
}

package dev.ratelimit;

import dev.ratelimit.internal.LogThrottle;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The limiter's listeners as one: each is called in the order it was added, and one that throws
 * (which it must not) is logged, at most once a minute, and never stops a check or the others.
 */
final class Listeners implements RateLimitListener {
  private static final System.Logger LOG = System.getLogger(RateLimiter.class.getName());

  private final RateLimitListener[] listeners;
  private final LogThrottle throttle = new LogThrottle(System::nanoTime, TimeUnit.MINUTES.toNanos(1));

  private Listeners(List<RateLimitListener> listeners) {
    this.listeners = listeners.toArray(RateLimitListener[]::new);
  }

  /** {@link RateLimitListener#NONE} when there is none, else the listeners, guarded. */
  static RateLimitListener of(List<RateLimitListener> listeners) {
    return listeners.isEmpty() ? NONE : new Listeners(listeners);
  }

  @Override
  public void onDecision(Policy policy, Outcome outcome) {
    for (RateLimitListener l : listeners) {
      try {
        l.onDecision(policy, outcome);
      } catch (RuntimeException e) {
        failed(l, e);
      }
    }
  }

  @Override
  public void onBackendCall(long nanos, boolean success) {
    for (RateLimitListener l : listeners) {
      try {
        l.onBackendCall(nanos, success);
      } catch (RuntimeException e) {
        failed(l, e);
      }
    }
  }

  @Override
  public void onBackendError(Throwable error) {
    for (RateLimitListener l : listeners) {
      try {
        l.onBackendError(error);
      } catch (RuntimeException e) {
        failed(l, e);
      }
    }
  }

  @Override
  public void onCircuitStateChange(CircuitState from, CircuitState to) {
    for (RateLimitListener l : listeners) {
      try {
        l.onCircuitStateChange(from, to);
      } catch (RuntimeException e) {
        failed(l, e);
      }
    }
  }

  private void failed(RateLimitListener l, RuntimeException e) {
    long suppressed = throttle.tryAcquire(l.getClass().getName());
    if (suppressed >= 0) {
      LOG.log(Level.WARNING, "RateLimitListener " + l.getClass().getName() + " threw; listeners must not"
          + (suppressed > 0 ? " (" + suppressed + " more since the last line)" : ""), e);
    }
  }
}

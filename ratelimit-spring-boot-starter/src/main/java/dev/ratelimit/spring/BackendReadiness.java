package dev.ratelimit.spring;

import dev.ratelimit.redis.RedisBackend;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.availability.ApplicationAvailability;
import org.springframework.boot.availability.AvailabilityChangeEvent;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ApplicationListener;

/**
 * Warms the Redis backend up in the background ({@link RedisBackend#warmUp()}: a round trip that
 * loads its scripts), retrying until Redis answers, and until then keeps the application's
 * readiness at {@link ReadinessState#REFUSING_TRAFFIC}: a cold instance whose every check would
 * be decided by the failure mode (the first connection and script loads outlive the timeout and
 * open the circuit) takes no traffic. Only the first warm-up counts: a later outage is the failure
 * mode's and the health component's business, not readiness's (every instance shares the one Redis).
 * Nor does a start-up outage hold readiness longer than {@code ratelimit.readiness.max-wait}: then
 * the application is ready and the failure mode decides, as in a later outage (a whole fleet
 * restarted while Redis is down would otherwise serve nothing, whatever its failure mode).
 *
 * <p>When Boot announces {@link ReadinessState#ACCEPTING_TRAFFIC} before the warm-up has
 * succeeded, this answers with {@code REFUSING_TRAFFIC} at once (it runs after Boot's own
 * availability bean, whose auto-configuration comes first), and the retrying thread checks again
 * after every failed attempt; once the warm-up succeeds it announces {@code ACCEPTING_TRAFFIC},
 * if it had refused. It never makes ready an application that Boot has not.
 */
final class BackendReadiness implements ApplicationListener<AvailabilityChangeEvent<?>>, DisposableBean {
  private static final Logger LOG = Logger.getLogger(BackendReadiness.class.getName());
  private static final long FIRST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  private static final long LONGEST_PAUSE_NANOS = TimeUnit.SECONDS.toNanos(2);

  private final RedisBackend backend;
  private final boolean holdReadiness;
  private final long maxWaitNanos;
  private final long startNanos = System.nanoTime();
  private final ApplicationEventPublisher publisher;
  private final ApplicationAvailability availability;
  /** The warm-up's thread; null when there is nothing to warm up. */
  private final Thread thread;
  private boolean warm; // guarded by this
  private boolean refused; // guarded by this
  private boolean gaveUpWaiting; // guarded by this
  private volatile boolean closed;

  /**
   * Starts warming {@code backend} up (null: another backend, ready at once); holds readiness until
   * then, or for {@code maxWait} at most, when {@code holdReadiness}.
   * {@code availability} may be null (no Boot availability bean: only Boot's own event is answered).
   */
  BackendReadiness(RedisBackend backend, boolean holdReadiness, Duration maxWait, ApplicationEventPublisher publisher,
      ApplicationAvailability availability) {
    this.backend = backend;
    this.holdReadiness = holdReadiness;
    this.maxWaitNanos = maxWait.toNanos();
    this.publisher = publisher;
    this.availability = availability;
    if (backend == null) { // another backend: nothing to wait for
      this.warm = true;
      this.thread = null;
      return;
    }
    this.thread = new Thread(this::warmUp, "ratelimit-redis-warm-up");
    thread.setDaemon(true);
    thread.start();
  }

  /** Whether Redis has answered once with the scripts loaded. */
  synchronized boolean isWarm() {
    return warm;
  }

  private void warmUp() {
    long pause = FIRST_PAUSE_NANOS;
    boolean logged = false;
    while (!closed) {
      try {
        backend.warmUp();
        ready(logged);
        return;
      } catch (RuntimeException e) {
        if (!logged && !closed) {
          logged = true;
          LOG.log(Level.WARNING, "the rate limiter's Redis backend does not answer yet ("
              + e.getClass().getSimpleName() + "); its failure mode decides"
              + (holdReadiness ? ", and the application stays not ready (readiness REFUSING_TRAFFIC), until it does"
                  + " or for " + Duration.ofNanos(maxWaitNanos) + " at most (ratelimit.readiness.max-wait)"
                  : " until it does"));
        }
        long waitedNanos = System.nanoTime() - startNanos;
        if (waitedNanos >= maxWaitNanos) {
          stopWaiting();
        } else {
          refuseIfAccepting();
          pause = Math.min(pause, maxWaitNanos - waitedNanos); // the wait ends on time, not at the next attempt
        }
      }
      try {
        TimeUnit.NANOSECONDS.sleep(pause);
      } catch (InterruptedException e) {
        return; // closed
      }
      pause = Math.min(2 * pause, LONGEST_PAUSE_NANOS);
    }
  }

  private synchronized void ready(boolean logged) {
    warm = true;
    if (logged) {
      LOG.log(Level.INFO, "the rate limiter's Redis backend answers and its scripts are loaded"
          + (refused ? ": the application is ready" : ""));
    }
    if (refused && !gaveUpWaiting && !closed) { // after giving up waiting, already announced
      AvailabilityChangeEvent.publish(publisher, this, ReadinessState.ACCEPTING_TRAFFIC);
    }
  }

  /** The longest wait is over: ready as Boot says; the warm-up goes on, the failure mode decides meanwhile. */
  private synchronized void stopWaiting() {
    if (gaveUpWaiting || closed) {
      return;
    }
    gaveUpWaiting = true;
    if (holdReadiness) {
      LOG.log(Level.WARNING, "the rate limiter's Redis backend has not answered within " + Duration.ofNanos(maxWaitNanos)
          + " (ratelimit.readiness.max-wait): the application is ready, and the failure mode decides until Redis answers");
    }
    if (refused) {
      AvailabilityChangeEvent.publish(publisher, this, ReadinessState.ACCEPTING_TRAFFIC);
    }
  }

  /** Refuses traffic if the application says it accepts it (Boot announced readiness after our answer). */
  private synchronized void refuseIfAccepting() {
    if (holdReadiness && !warm && !gaveUpWaiting && !closed && availability != null
        && availability.getReadinessState() == ReadinessState.ACCEPTING_TRAFFIC) {
      refuse();
    }
  }

  @Override
  public void onApplicationEvent(AvailabilityChangeEvent<?> event) {
    if (!holdReadiness || event.getState() != ReadinessState.ACCEPTING_TRAFFIC || event.getSource() == this) {
      return;
    }
    synchronized (this) {
      if (!warm && !gaveUpWaiting && !closed) {
        refuse(); // while holding the lock: the warm-up's ACCEPTING cannot come between
      }
    }
  }

  private void refuse() { // guarded by this
    refused = true;
    AvailabilityChangeEvent.publish(publisher, this, ReadinessState.REFUSING_TRAFFIC);
  }

  @Override
  public void destroy() {
    closed = true;
    if (thread != null) {
      thread.interrupt();
    }
  }
}

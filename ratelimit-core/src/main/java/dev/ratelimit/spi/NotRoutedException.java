package dev.ratelimit.spi;

/**
 * A backend call that was never run because the backend could not route it now, while the backend
 * itself answers: in a Redis Cluster, a slot that moved (a failover, resharding, a node added) to a
 * node the client has not discovered yet. The limiter's failure mode decides the call, as for any
 * backend error; the circuit breaker does not count it as a failure, since it says nothing of the
 * other keys, which Redis keeps serving (opening the circuit would send every key to the failure
 * mode for one slot's move).
 *
 * <p>A backend throws it (or fails its stage with it) only when the call certainly did not run, so
 * that nothing is counted for it.
 */
public class NotRoutedException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** A call that could not be routed, for the reason {@code cause} gives. */
  public NotRoutedException(String message, Throwable cause) {
    super(message, cause);
  }
}

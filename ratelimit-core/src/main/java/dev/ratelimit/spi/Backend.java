package dev.ratelimit.spi;

import dev.ratelimit.Decision;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Where the algorithms are evaluated and state is kept: the in-memory backend, Redis, or yours.
 *
 * <p>The {@link dev.ratelimit.RateLimiter} validates every argument, reads the clock and passes
 * {@code nowMicros} (epoch microseconds); a backend never reads a clock of its own for decisions.
 * Every method is thread-safe, and each check is atomic for its key: concurrent checks on one key
 * behave as if run one after another. A denied check, {@link #inspect} and a failed call change no
 * state. Arguments arrive valid: the key is non-empty, {@code 1 <= cost <= policy.capacity()}.
 *
 * <p>State identity is ({@code key}, {@code policy.name()}, {@code policy.algorithm()}): policies
 * that differ in either never share state, and a named policy keeps its keys when its numbers change.
 */
public interface Backend extends AutoCloseable {

  /** Checks and, when allowed, consumes {@code cost} units. */
  Decision check(String key, Policy policy, long cost, long nowMicros);

  /**
   * The same as {@link #check}, without blocking the caller. The default runs {@link #check} on the
   * calling thread; a remote backend overrides it. Failures complete the stage exceptionally.
   */
  default CompletionStage<Decision> checkAsync(String key, Policy policy, long cost, long nowMicros) {
    try {
      return CompletableFuture.completedFuture(check(key, policy, cost, nowMicros));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** Checks every policy for {@code key} atomically: all consume, or none does. */
  MultiDecision checkAll(String key, List<Policy> policies, long cost, long nowMicros);

  /**
   * The state now as the decision of a cost-1 check that consumes nothing: {@code remaining} is
   * what is available now. Writes nothing.
   */
  Decision inspect(String key, Policy policy, long nowMicros);

  /**
   * Forgets the state of {@code key} under {@code policy}: its next check sees a fresh state.
   * {@code nowMicros} locates the windows of the window algorithms.
   */
  void reset(String key, Policy policy, long nowMicros);

  /** Releases what the backend owns; the default does nothing. */
  @Override
  default void close() {}
}

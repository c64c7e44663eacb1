package dev.ratelimit.spi;

import dev.ratelimit.Decision;
import dev.ratelimit.KeyedPolicy;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Where the algorithms are evaluated and state is kept: the in-memory backend, Redis, or yours.
 *
 * <p>The {@link dev.ratelimit.RateLimiter} validates every argument, reads the clock and passes
 * {@code nowMicros} (epoch microseconds); a backend decides at that time, unless it is configured
 * to decide at a clock of its own (Redis's server time, an opt-in), and then says which time it
 * used ({@link Evaluation#nowMicros}).
 * Every method is thread-safe, and each check is atomic for its key: concurrent checks on one key
 * behave as if run one after another. A denied check, {@link #inspect} and a failed call change no
 * state. Arguments arrive valid: the key is non-empty, {@code 1 <= cost <= policy.capacity()}.
 *
 * <p>State identity is ({@code key}, {@code policy.name()}, {@code policy.algorithm()}): policies
 * that differ in either never share state, and a named policy keeps its keys when its numbers change.
 *
 * <p>What the limiter calls (its near-cache is on by default for a {@link #isRemote remote}
 * backend, and learns from the state of denials): for a check, {@link #evaluateAsync} with the
 * near-cache and {@link #checkAsync} without, when the backend overrides {@code checkAsync}, else
 * {@link #evaluate} or {@link #check} directly; for a multi-policy check, {@link #evaluateAllAsync}
 * with the near-cache, else {@link #checkAllAsync} when overridden, else {@link #checkAll}. So a
 * remote backend that sends state overrides {@link #evaluateAsync} and {@link #evaluateAllAsync}:
 * the limiter never calls {@link #evaluateAll}, nor {@link #evaluate} once {@code checkAsync} is
 * overridden. For a check of pairs of different keys, {@link #checkAllAsync(List, long, long)}
 * when overridden, else {@link #checkAll(List, long, long)}, without the near-cache.
 */
public interface Backend extends AutoCloseable {

  /** Checks and, when allowed, consumes {@code cost} units. */
  Decision check(String key, Policy policy, long cost, long nowMicros);

  /**
   * The same as {@link #check}, without blocking the caller. The default runs {@link #check} on the
   * calling thread; a remote backend overrides it. Failures complete the stage exceptionally.
   *
   * <p>A backend that overrides this method has the limiter call it for every check, also for its
   * synchronous {@code check}, and wait for the stage no longer than the limiter's timeout. Only
   * what happens after the stage is returned can be bounded: a backend whose calls can hang
   * (anything remote) must override this method and return promptly. A backend that keeps this
   * default is called through {@link #check} directly, and no timeout cuts that short.
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
   * The same as {@link #checkAll}, without blocking the caller. The default runs {@link #checkAll}
   * on the calling thread, which is right for an in-memory backend; a remote backend overrides it
   * for the same reason as {@link #checkAsync}. Failures complete the stage exceptionally.
   */
  default CompletionStage<MultiDecision> checkAllAsync(
      String key, List<Policy> policies, long cost, long nowMicros) {
    try {
      return CompletableFuture.completedFuture(checkAll(key, policies, cost, nowMicros));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Checks every (key, policy) pair atomically, all or nothing: all consume, or none does, as
   * {@link #checkAll(String, List, long, long)} does for the policies of one key; the decisions in
   * the order of {@code checks}. The limiter calls it for {@code RateLimiter.checkAll(checks, cost)}
   * when the pairs have different keys; the pairs arrive valid and distinct (no two with an equal
   * key and a policy of the same name and algorithm), the cost within every policy's capacity.
   * Pairs of one key must act on that key's state as {@code checkAll(key, ...)} does.
   *
   * <p>The default serves a backend written before cross-key checks: when every pair has the same
   * key it calls {@link #checkAll(String, List, long, long)}; otherwise it throws {@link
   * UnsupportedOperationException} (the limiter then throws it to the caller, before calling: it
   * is not a backend failure). A backend that keeps state per key must take care that concurrent
   * cross-key checks cannot deadlock (the in-memory backend locks keys in one global order).
   */
  default MultiDecision checkAll(List<KeyedPolicy> checks, long cost, long nowMicros) {
    String key = checks.get(0).key();
    List<Policy> policies = new ArrayList<>(checks.size());
    for (KeyedPolicy check : checks) {
      if (!check.key().equals(key)) {
        throw new UnsupportedOperationException(getClass().getName()
            + " does not check pairs of different keys together (override Backend.checkAll(List, long, long))");
      }
      policies.add(check.policy());
    }
    return checkAll(key, policies, cost, nowMicros);
  }

  /**
   * The same as {@link #checkAll(List, long, long)}, without blocking the caller, as {@link
   * #checkAllAsync(String, List, long, long)} is to its {@code checkAll}. The default runs {@link
   * #checkAll(List, long, long)} on the calling thread; a remote backend overrides it. Failures
   * complete the stage exceptionally; an {@link UnsupportedOperationException} is thrown.
   */
  default CompletionStage<MultiDecision> checkAllAsync(List<KeyedPolicy> checks, long cost, long nowMicros) {
    MultiDecision decision;
    try {
      decision = checkAll(checks, cost, nowMicros);
    } catch (UnsupportedOperationException e) {
      throw e;
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return CompletableFuture.completedFuture(decision);
  }

  /**
   * The state now as the decision of a cost-1 check that consumes nothing: {@code remaining} is
   * what is available now. Writes nothing.
   */
  Decision inspect(String key, Policy policy, long nowMicros);

  /**
   * The state now as the decision a check of {@code cost} would get, consuming nothing and writing
   * nothing: allowed exactly when that check would be, {@code remaining} what is available now,
   * a denial's {@code retryAfter} the exact wait for {@code cost}. The limiter's {@code peekAll}
   * asks it. The default answers from {@link #inspect(String, Policy, long)}: exactly for a cost of
   * 1; for a larger one allowed when {@code remaining} covers it, else denied with the time until
   * the state is fresh ({@code resetAfter}) as {@code retryAfter}, never earlier than the exact
   * wait. The built-in backends answer exactly.
   */
  default Decision inspect(String key, Policy policy, long cost, long nowMicros) {
    Decision now = inspect(key, policy, nowMicros);
    if (cost == 1 || (now.allowed() && now.remaining() >= cost)) {
      return now;
    }
    long wait = Math.max(now.retryAfterMicros(), now.resetAfterMicros());
    return Decision.denied(policy, now.remaining(), wait, now.resetAfterMicros());
  }

  /**
   * Forgets the state of {@code key} under {@code policy}: its next check sees a fresh state.
   * {@code nowMicros} locates the windows of the window algorithms.
   */
  void reset(String key, Policy policy, long nowMicros);

  /**
   * The same as {@link #check}, and on a denial the state it was made on, for a near-cache. The
   * default provides no state; a remote backend overrides it.
   */
  default Evaluation evaluate(String key, Policy policy, long cost, long nowMicros) {
    return new Evaluation(check(key, policy, cost, nowMicros), null, nowMicros);
  }

  /** The same as {@link #checkAsync}, with the state of a denial (see {@link #evaluate}). */
  default CompletionStage<Evaluation> evaluateAsync(String key, Policy policy, long cost, long nowMicros) {
    return checkAsync(key, policy, cost, nowMicros).thenApply(d -> new Evaluation(d, null, nowMicros));
  }

  /** The same as {@link #checkAll}, with every policy's state on a denial (see {@link #evaluate}). */
  default MultiEvaluation evaluateAll(String key, List<Policy> policies, long cost, long nowMicros) {
    return new MultiEvaluation(checkAll(key, policies, cost, nowMicros), null, nowMicros);
  }

  /** The same as {@link #checkAllAsync}, with every policy's state on a denial (see {@link #evaluate}). */
  default CompletionStage<MultiEvaluation> evaluateAllAsync(
      String key, List<Policy> policies, long cost, long nowMicros) {
    return checkAllAsync(key, policies, cost, nowMicros).thenApply(m -> new MultiEvaluation(m, null, nowMicros));
  }

  /**
   * Whether state lives in another process, so that answering hot denied keys from a local
   * near-cache saves round trips; limiters turn their near-cache on by default for such backends.
   */
  default boolean isRemote() {
    return false;
  }

  /** Releases what the backend owns; the default does nothing. */
  @Override
  default void close() {}
}

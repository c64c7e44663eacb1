package dev.ratelimit;

import dev.ratelimit.spi.Mark;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Units taken now for work whose true cost is known only when it ends: made by {@link
 * RateLimiter#reserve}, settled once by {@link #commit} or {@link #cancel}.
 *
 * <pre>{@code
 * Reservation r = limiter.reserve("login:" + user, failedLogins, 1);
 * if (!r.allowed()) {
 *   return tooManyRequests(r.decision().retryAfter());
 * }
 * boolean ok = false;
 * try {
 *   ok = authenticate(user, password);
 * } finally {
 *   if (ok) r.cancel(); else r.commit(1);   // only failures count
 * }
 * }</pre>
 *
 * <p>The estimate is debited atomically, as a check of that cost would be, and the reservation is
 * refused exactly when that check would be (a refused one holds nothing and cannot be settled).
 * While it is out, its units count against the limit, so calls in flight at once can never pass
 * beyond it. {@link #commit commit(actual)} charges the difference when the actual cost is higher
 * (whatever the limit: the work was done, later checks pay the debt) and gives back the surplus
 * when lower; {@link #cancel} gives back all of it. A give-back leaves the limiter admitting no
 * more than if those units had never been taken, and exactly as much when nothing happened on the
 * key in between (ARCHITECTURE §4 states each algorithm's rule). A reservation never settled stays
 * charged at its estimate.
 *
 * <p>Thread-safe; settling twice is refused. A settle that cannot reach the backend changes nothing
 * there, is logged and reported to the listener as a backend error, and never throws into the
 * caller.
 */
public final class Reservation {
  /** The largest cost a commit takes: 2<sup>52</sup>, exact in every backend's arithmetic. */
  public static final long MAX_COST = 1L << 52;

  /** Where a reservation's settle goes: the limiter that made it. */
  interface Settler {
    /** Gives back {@code units} (when positive) or charges {@code -units}; false when it could not reach the backend. */
    boolean settle(Reservation reservation, long units);

    /** {@link #settle} without blocking: completes (never exceptionally) when the backend answered or failed. */
    CompletionStage<Boolean> settleAsync(Reservation reservation, long units);
  }

  private final Settler settler;
  private final String key;
  private final List<Policy> policies;
  private final long estimate;
  private final MultiDecision decision;
  /** One per policy, null where nothing is held there (a shadow denial, a failure mode's answer). */
  private final List<Mark> marks;
  /** Each policy's key, for a reservation across keys; null when every policy is of {@link #key}. */
  private final List<String> keys;
  private final AtomicBoolean settled = new AtomicBoolean();
  private volatile boolean settleFailed;

  Reservation(Settler settler, String key, List<Policy> policies, long estimate, MultiDecision decision,
      List<Mark> marks) {
    this(settler, key, null, policies, estimate, decision, marks);
  }

  /** A reservation of {@code pairs} of different keys. */
  Reservation(Settler settler, List<KeyedPolicy> pairs, long estimate, MultiDecision decision, List<Mark> marks) {
    this(settler, pairs.get(0).key(), pairs.stream().map(KeyedPolicy::key).toList(), KeyedPolicy.policies(pairs),
        estimate, decision, marks);
  }

  private Reservation(Settler settler, String key, List<String> keys, List<Policy> policies, long estimate,
      MultiDecision decision, List<Mark> marks) {
    this.settler = settler;
    this.key = key;
    this.keys = keys;
    this.policies = policies;
    this.estimate = estimate;
    this.decision = decision;
    this.marks = marks;
  }

  /** Whether the units were taken; false when refused (nothing was taken). */
  public boolean allowed() {
    return decision.allowed();
  }

  /**
   * The decision for the reservation: the only one for a single policy; for several, the limiting
   * one (see {@link MultiDecision#limiting}).
   */
  public Decision decision() {
    return decision.decisions().size() == 1 ? decision.decisions().get(0) : decision.limiting();
  }

  /** Every policy's decision, in the order reserved. */
  public MultiDecision decisions() {
    return decision;
  }

  /** The key reserved on; for a reservation across keys, its first pair's (see {@link #keyedPolicies}). */
  public String key() {
    return key;
  }

  /** Each policy with the key it was reserved on, in the order reserved. */
  public List<KeyedPolicy> keyedPolicies() {
    List<KeyedPolicy> pairs = new java.util.ArrayList<>(policies.size());
    for (int i = 0; i < policies.size(); i++) {
      pairs.add(KeyedPolicy.of(keyOf(i), policies.get(i)));
    }
    return pairs;
  }

  /** The key policy {@code i} was reserved on. */
  String keyOf(int i) {
    return keys == null ? key : keys.get(i);
  }

  /** Whether its policies are of different keys ({@link RateLimiter#reserve(List, long)}). */
  boolean acrossKeys() {
    return keys != null;
  }

  /** The policies reserved, in order. */
  public List<Policy> policies() {
    return policies;
  }

  /** The units taken: the estimate. */
  public long estimate() {
    return estimate;
  }

  /**
   * Whether its settle could not reach the backend, tried again within the timeout (counted in
   * {@code RateLimiter.failedSettles()}): it may or may not have been applied. False before it is
   * settled, and once the settle went through or had nothing to send; for an async settle, known
   * when its stage completes.
   */
  public boolean settleFailed() {
    return settleFailed;
  }

  /** Whether {@link #commit} or {@link #cancel} has been called. */
  public boolean settled() {
    return settled.get();
  }

  /**
   * Settles at the actual cost: charges {@code actual − estimate} more when higher, gives back
   * {@code estimate − actual} when lower, nothing when equal.
   *
   * @param actual the actual cost, from 1 to {@link #MAX_COST}; to give back the whole estimate,
   *     {@link #cancel}
   * @throws IllegalArgumentException when {@code actual} is out of range (nothing is settled)
   * @throws IllegalStateException when refused or already settled (nothing changes)
   */
  public void commit(long actual) {
    requireActual(actual);
    take("commit(" + actual + ")");
    if (actual != estimate) {
      settleFailed = !settler.settle(this, estimate - actual);
    }
  }

  /**
   * Gives the whole estimate back.
   *
   * @throws IllegalStateException when refused or already settled (nothing changes)
   */
  public void cancel() {
    take("cancel()");
    settleFailed = !settler.settle(this, estimate);
  }

  /**
   * {@link #commit} without blocking a thread: validated and marked settled at once (throwing as
   * {@code commit} does), the stage completing when the backend has answered. It never completes
   * exceptionally: a settle that cannot reach the backend is reported as {@code commit}'s is.
   *
   * @throws IllegalArgumentException as {@link #commit}
   * @throws IllegalStateException as {@link #commit}
   */
  public CompletionStage<Void> commitAsync(long actual) {
    requireActual(actual);
    take("commitAsync(" + actual + ")");
    return actual == estimate ? CompletableFuture.completedFuture(null)
        : settler.settleAsync(this, estimate - actual).thenAccept(ok -> settleFailed = !ok);
  }

  /**
   * {@link #cancel} without blocking a thread, as {@link #commitAsync} is.
   *
   * @throws IllegalStateException as {@link #cancel}
   */
  public CompletionStage<Void> cancelAsync() {
    take("cancelAsync()");
    return settler.settleAsync(this, estimate).thenAccept(ok -> settleFailed = !ok);
  }

  private static void requireActual(long actual) {
    if (actual < 1 || actual > MAX_COST) {
      throw new IllegalArgumentException("actual cost must be from 1 to 2^52, was " + actual
          + (actual == 0 ? "; to give the whole estimate back, call cancel()" : ""));
    }
  }

  private void take(String call) {
    if (!decision.allowed()) {
      throw new IllegalStateException(call + " on a refused reservation of '" + CheckArguments.printable(key)
          + "': it holds nothing to settle");
    }
    if (!settled.compareAndSet(false, true)) {
      throw new IllegalStateException(call + " on a reservation of '" + CheckArguments.printable(key)
          + "' that is already settled: a reservation is settled once");
    }
  }

  /**
   * Where its units went, one per policy in order, null where nothing is held there (a refused
   * reservation, a failure mode's answer, a shadow policy's denial): with the key, the policies and
   * the estimate, what settles it from another process ({@link RateLimiter#resume}). A decision
   * service carries them in a signed token; they are never to be taken unsigned from a client.
   */
  public List<Mark> marks() {
    return marks;
  }

  @Override
  public String toString() {
    return "Reservation[key=" + CheckArguments.printable(key) + ", estimate=" + estimate + ", allowed=" + allowed()
        + ", settled=" + settled() + ", policies=" + policies.stream().map(Policy::name).toList() + "]";
  }
}

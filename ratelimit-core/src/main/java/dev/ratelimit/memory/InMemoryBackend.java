package dev.ratelimit.memory;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.Policy.VarExpiration;
import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.Require;
import dev.ratelimit.spi.Backend;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The embedded backend: all six algorithms in Java, state in a bounded Caffeine cache.
 *
 * <p>Each check is atomic per key (a lock striped by key, held for that key's work only). Memory is
 * bounded twice: at most {@link Builder#maximumKeys(long) maximumKeys} states (Caffeine's
 * W-TinyLFU keeps frequently used keys over one-off ones), and every state expires at the moment it
 * stops mattering. Expiry follows the limiter's clock, the latest {@code now} the backend was given,
 * so a {@link dev.ratelimit.ManualClock} moves expiry too.
 *
 * <p>Memory per key: one small object for every algorithm but SLIDING_LOG, which keeps one
 * {@code long} per admitted unit in the window (up to {@code limit}).
 */
public final class InMemoryBackend implements Backend {
  private static final int STRIPES = 1 << 12;

  private final Cache<StateKey, State> states;
  private final VarExpiration<StateKey, State> expiration;
  private final Object[] locks = new Object[STRIPES];
  /** The limiter's clock as Caffeine sees it: the latest now, in ns. */
  private final AtomicLong latestNanos = new AtomicLong(Long.MIN_VALUE);

  private InMemoryBackend(long maximumKeys) {
    for (int i = 0; i < STRIPES; i++) {
      locks[i] = new Object();
    }
    this.states = Caffeine.newBuilder()
        .maximumSize(maximumKeys)
        .expireAfter(new UntilItStopsMattering())
        .ticker(latestNanos::get)
        .executor(Runnable::run)
        .build();
    this.expiration = states.policy().expireVariably().orElseThrow();
  }

  /** A backend holding at most 1,000,000 keys. */
  public static InMemoryBackend create() {
    return builder().build();
  }

  /** A builder for the bounds. */
  public static Builder builder() {
    return new Builder();
  }

  @Override
  public Decision check(String key, Policy policy, long cost, long nowMicros) {
    observe(nowMicros);
    StateKey id = new StateKey(key, policy.name(), policy.algorithm());
    synchronized (lockFor(key)) {
      State state = states.getIfPresent(id);
      boolean fresh = state == null;
      if (fresh) {
        state = State.fresh(policy);
      }
      Decision decision = state.check(policy, nowMicros, cost, true);
      if (decision.allowed()) {
        store(id, state, fresh, policy, nowMicros);
      }
      return decision;
    }
  }

  @Override
  public MultiDecision checkAll(String key, List<Policy> policies, long cost, long nowMicros) {
    observe(nowMicros);
    int size = policies.size();
    StateKey[] ids = new StateKey[size];
    State[] found = new State[size];
    boolean[] fresh = new boolean[size];
    List<Decision> decisions = new ArrayList<>(size);
    synchronized (lockFor(key)) {
      boolean allowed = true;
      for (int i = 0; i < size; i++) {
        Policy policy = policies.get(i);
        ids[i] = new StateKey(key, policy.name(), policy.algorithm());
        State state = states.getIfPresent(ids[i]);
        fresh[i] = state == null;
        found[i] = fresh[i] ? State.fresh(policy) : state;
        Decision dryRun = found[i].check(policy, nowMicros, cost, false);
        decisions.add(dryRun);
        allowed &= dryRun.allowed();
      }
      if (!allowed) {
        return new MultiDecision(false, decisions);
      }
      for (int i = 0; i < size; i++) {
        Policy policy = policies.get(i);
        decisions.set(i, found[i].check(policy, nowMicros, cost, true));
        store(ids[i], found[i], fresh[i], policy, nowMicros);
      }
      return new MultiDecision(true, decisions);
    }
  }

  @Override
  public Decision inspect(String key, Policy policy, long nowMicros) {
    observe(nowMicros);
    StateKey id = new StateKey(key, policy.name(), policy.algorithm());
    synchronized (lockFor(key)) {
      State state = states.getIfPresent(id);
      return (state != null ? state : State.fresh(policy)).check(policy, nowMicros, 1, false);
    }
  }

  @Override
  public void reset(String key, Policy policy, long nowMicros) {
    synchronized (lockFor(key)) {
      states.invalidate(new StateKey(key, policy.name(), policy.algorithm()));
    }
  }

  /**
   * The number of (key, policy) states alive now on the limiter's clock; it walks every entry, so
   * it is for tests and diagnostics, not for a hot path.
   */
  public long size() {
    states.cleanUp();
    return states.asMap().keySet().stream().count();
  }

  @Override
  public void close() {
    states.invalidateAll();
  }

  /**
   * Records a state's new expiry: a new state is put; an existing one, already in the cache and
   * mutated in place, only has its expiry moved (much cheaper than a put).
   */
  private void store(StateKey id, State state, boolean fresh, Policy policy, long nowMicros) {
    state.expiresAt = state.computeExpiresAt(policy);
    if (fresh) {
      states.put(id, state);
    } else {
      expiration.setExpiresAfter(id, Math.max(0, state.expiresAt - nowMicros), TimeUnit.MICROSECONDS);
    }
  }

  private Object lockFor(String key) {
    int h = key.hashCode();
    return locks[(h ^ (h >>> 16)) & (STRIPES - 1)];
  }

  private void observe(long nowMicros) {
    long nanos = nowMicros * 1_000L;
    long seen = latestNanos.get();
    while (nanos > seen && !latestNanos.compareAndSet(seen, nanos)) {
      seen = latestNanos.get();
    }
  }

  /** Configures an {@link InMemoryBackend}. */
  public static final class Builder {
    private long maximumKeys = 1_000_000;

    private Builder() {}

    /** The most (key, policy) states held at once; default 1,000,000. */
    public Builder maximumKeys(long maximumKeys) {
      Require.argument(maximumKeys >= 1, "maximumKeys must be at least 1, was %s", maximumKeys);
      this.maximumKeys = maximumKeys;
      return this;
    }

    /** A new backend. */
    public InMemoryBackend build() {
      return new InMemoryBackend(maximumKeys);
    }
  }

  private record StateKey(String key, String policyName, Algorithm algorithm) {}

  /** Each state lives until the moment it is equivalent to a fresh one. */
  private final class UntilItStopsMattering implements Expiry<StateKey, State> {
    @Override
    public long expireAfterCreate(StateKey key, State state, long currentTime) {
      return untilExpiry(state, currentTime);
    }

    @Override
    public long expireAfterUpdate(StateKey key, State state, long currentTime, long currentDuration) {
      return untilExpiry(state, currentTime);
    }

    @Override
    public long expireAfterRead(StateKey key, State state, long currentTime, long currentDuration) {
      return currentDuration;
    }

    private long untilExpiry(State state, long currentTime) {
      if (state.expiresAt == Long.MIN_VALUE) {
        return 0;
      }
      if (state.expiresAt >= Long.MAX_VALUE / 1_000L) {
        return Long.MAX_VALUE; // beyond the year 2262: Caffeine caps it
      }
      long nanos = state.expiresAt * 1_000L - currentTime;
      return Math.max(0, nanos);
    }
  }
}

package dev.ratelimit.memory;

import dev.ratelimit.Policy;
import dev.ratelimit.spi.Keys;
import dev.ratelimit.spi.Mark;
import java.util.concurrent.TimeUnit;

/**
 * The in-memory backend's settling of reservations: give-backs into a state and forced charges,
 * each under the key's lock, with the entry's expiry kept as a check keeps it.
 */
final class Settlements {
  private final InMemoryBackend store;

  Settlements(InMemoryBackend store) {
    this.store = store;
  }

  /** Gives back up to {@code units} of {@code mark}; nothing when the key has no such state. */
  void giveBack(String rawKey, Policy policy, long units, Mark mark, long nowMicros) {
    settle(Keys.bounded(rawKey), policy, nowMicros, false, s -> s.giveBack(policy, nowMicros, units, mark));
  }

  /** Charges {@code units} whatever the limit, creating the state if there is none. */
  void charge(String rawKey, Policy policy, long units, long nowMicros) {
    settle(Keys.bounded(rawKey), policy, nowMicros, true, s -> s.charge(policy, nowMicros, units));
  }

  private void settle(String key, Policy policy, long nowMicros, boolean create,
      java.util.function.Consumer<State> change) {
    store.clock.observeExactly(nowMicros);
    for (;;) {
      State entry = store.index.get(key);
      boolean created = entry == null;
      if (created) {
        if (!create) {
          return; // nothing held for the key: nothing to give back
        }
        entry = State.fresh(policy); // the key's first state is its entry
        entry.adopt(policy);
      }
      boolean done;
      entry.lock();
      try {
        done = settleLocked(key, entry, created, policy, nowMicros, create, change);
      } finally {
        entry.unlock();
      }
      if (done) {
        return;
      }
    }
  }

  /** {@link #settle} on {@code entry}, its lock held; false when it must run again. */
  private boolean settleLocked(String key, State entry, boolean created, Policy policy, long nowMicros,
      boolean create, java.util.function.Consumer<State> change) {
    if (entry.removed || (!created && store.dropIfExpired(key, entry))) {
      return false;
    }
    store.readopt(key, entry);
    if (!created && !entry.kept) {
      store.promote(key, entry);
      if (entry.removed && !store.restore(key, entry)) {
        return false;
      }
    }
    State state = entry.find(policy);
    boolean added = state == null;
    if (added) {
      if (!create) {
        return true;
      }
      state = State.fresh(policy);
    }
    change.accept(state);
    if (created) {
      if (!store.holdsNewKeys()) {
        return true; // not kept: the kept states fill the bound
      }
      entry.kept = true; // a charge may leave a debt: it denies
      entry.settle(entry, policy, store.clock.lag(nowMicros));
      if (!store.publish(key, entry)) {
        return false;
      }
      store.adjustProbationBound();
      return true;
    }
    if (added) {
      if (!store.holdsNewKeys()) {
        return true;
      }
      entry.add(state, policy);
    }
    long oldHold = entry.hold;
    long hold = entry.settle(state, policy, store.clock.lag(nowMicros));
    if (added || hold != Entry.UNCHANGED) {
      store.beforeRenewal(oldHold);
    }
    if (added) {
      store.kept.map.replace(key, entry, entry);
      store.adjustProbationBound();
    } else if (hold != Entry.UNCHANGED) {
      store.kept.expiration.setExpiresAfter(key, CacheClock.nanosUntil(hold, store.clock.latestNanos()),
          TimeUnit.NANOSECONDS);
    }
    store.readopt(key, entry);
    return !entry.removed || store.restore(key, entry);
  }
}

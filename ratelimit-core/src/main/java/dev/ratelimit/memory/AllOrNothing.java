package dev.ratelimit.memory;

import dev.ratelimit.Decision;
import dev.ratelimit.KeyedPolicy;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.spi.Keys;
import dev.ratelimit.spi.Mark;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The in-memory backend's all-or-nothing checks: several policies of one key, and pairs of
 * different keys, each decided under the entries' locks before anything is consumed.
 */
final class AllOrNothing {
  private final InMemoryBackend store;

  AllOrNothing(InMemoryBackend store) {
    this.store = store;
  }

  MultiDecision checkAll(String rawKey, List<Policy> policies, long cost, long nowMicros) {
    return checkAll(rawKey, policies, cost, nowMicros, null, 0);
  }

  /**
   * {@link #checkAll}, and when allowed and {@code marks} is given, each state records the
   * consumption as a reservation (ledger {@code ledgerId} if it opens one) and its mark lands in
   * {@code marks}.
   */
  MultiDecision checkAll(String rawKey, List<Policy> policies, long cost, long nowMicros, Mark[] marks,
      long ledgerId) {
    String key = Keys.bounded(rawKey);
    store.clock.observeExactly(nowMicros);
    for (;;) {
      State entry = store.index.get(key);
      boolean created = entry == null;
      if (created) {
        entry = State.fresh(policies.get(0)); // the key's first state is its entry
        entry.adopt(policies.get(0));
      }
      MultiDecision result;
      entry.lock();
      try {
        result = checkAllLocked(key, entry, created, policies, cost, nowMicros, marks, ledgerId);
      } finally {
        entry.unlock();
      }
      if (result != null) {
        return result;
      }
    }
  }

  /** {@link #checkAll} on {@code entry}, its lock held; null when it must run again. */
  private MultiDecision checkAllLocked(String key, State entry, boolean created, List<Policy> policies,
      long cost, long nowMicros, Mark[] marks, long ledgerId) {
    if (entry.removed || (!created && store.dropIfExpired(key, entry))) {
      return null;
    }
    store.readopt(key, entry);
    if (!created && !entry.kept) {
      store.promote(key, entry);
      if (entry.removed && !store.restore(key, entry)) {
        return null;
      }
    }
    int size = policies.size();
    State[] found = new State[size];
    boolean[] fresh = new boolean[size];
    Decision[] decisions = new Decision[size];
    boolean allowed = true;
    for (int i = 0; i < size; i++) {
      Policy policy = policies.get(i);
      State state = entry.find(policy);
      fresh[i] = state == null;
      found[i] = fresh[i] ? State.fresh(policy) : state;
      decisions[i] = State.check(found[i], policy, nowMicros, cost, false);
      allowed &= decisions[i].allowed();
    }
    if (!allowed) {
      return new MultiDecision(false, Arrays.asList(decisions));
    }
    boolean grew = false;
    long oldHold = entry.hold;
    long hold = Entry.UNCHANGED;
    long lag = store.clock.lag(nowMicros);
    boolean holdsNew = created || !InMemoryBackend.contains(fresh, true) || store.holdsNewKeys();
    for (int i = 0; i < size; i++) {
      Policy policy = policies.get(i);
      decisions[i] = State.check(found[i], policy, nowMicros, cost, true);
      if (marks != null) {
        marks[i] = found[i].reserved(policy, nowMicros, ledgerId);
      }
      if (fresh[i]) {
        if (!holdsNew) {
          continue; // decided as a fresh state, not store.kept: the store.kept states fill the bound
        }
        entry.add(found[i], policy);
        grew = true;
      }
      long h = entry.settle(found[i], policy, lag);
      hold = h != Entry.UNCHANGED ? h : hold;
    }
    MultiDecision result = new MultiDecision(true, Arrays.asList(decisions));
    if (created) {
      if (!store.holdsNewKeys()) {
        return result; // decided as a fresh key, not store.kept: the store.kept states fill the bound
      }
      for (Policy policy : policies) {
        entry.kept |= cost >= policy.capacity(); // a first check that took one policy's all: it denies
      }
      if (!store.publish(key, entry)) {
        return null;
      }
      if (entry.kept) {
        store.adjustProbationBound();
      }
      return result;
    }
    if (grew || hold != Entry.UNCHANGED) {
      store.beforeRenewal(oldHold);
    }
    if (grew) {
      store.kept.map.replace(key, entry, entry);
      store.adjustProbationBound();
    } else if (hold != Entry.UNCHANGED) {
      store.kept.expiration.setExpiresAfter(key, CacheClock.nanosUntil(hold, store.clock.latestNanos()), TimeUnit.NANOSECONDS);
    }
    store.readopt(key, entry);
    if (entry.removed && !store.restore(key, entry)) {
      return null;
    }
    return result;
  }

  /**
   * Checks pairs of (possibly) different keys atomically. Every involved key's entry is locked, in
   * the order of the bounded keys: one global order, so that two such checks never wait on each
   * other in a cycle (every other operation holds one entry's lock at a time, and waits for no
   * other while holding it). A key with several pairs is locked once. Under the locks every pair is
   * decided without consuming ({@link State#check} with {@code apply} off, the same arithmetic),
   * and only when all allow are they applied: first on the keys that had no entry (new entries,
   * still private, then published; should another thread have published one of those keys
   * meanwhile, the new entries are withdrawn and the whole check runs again, nothing consumed
   * anywhere), then on the keys' existing entries.
   */
  MultiDecision checkAll(List<KeyedPolicy> checks, long cost, long nowMicros) {
    return checkAll(checks, cost, nowMicros, null, 0);
  }

  /**
   * {@link #checkAll(List, long, long)}, and when allowed and {@code marks} is given, each pair's
   * state records the consumption as a reservation, as {@link #checkAll(String, List, long, long,
   * Mark[], long)} does.
   */
  MultiDecision checkAll(List<KeyedPolicy> checks, long cost, long nowMicros, Mark[] marks, long ledgerId) {
    int n = checks.size();
    String[] keys = new String[n];
    int[] order = new int[n]; // the pairs' indices sorted by bounded key (stably): the locking order
    for (int i = 0; i < n; i++) {
      keys[i] = Keys.bounded(checks.get(i).key());
      int j = i;
      while (j > 0 && keys[order[j - 1]].compareTo(keys[i]) > 0) {
        order[j] = order[j - 1];
        j--;
      }
      order[j] = i;
    }
    int[] groups = new int[n + 1]; // where each key's run of pairs starts in order, then n
    int count = 0;
    for (int at = 0; at < n; at++) {
      if (at == 0 || !keys[order[at]].equals(keys[order[at - 1]])) {
        groups[count++] = at;
      }
    }
    groups[count] = n;
    store.clock.observeExactly(nowMicros);
    for (;;) {
      MultiDecision result = checkAcross(checks, keys, order, groups, count, cost, nowMicros, marks, ledgerId);
      if (result != null) {
        return result;
      }
    }
  }

  /** One attempt of the cross-key {@link #checkAll(List, long, long)}: locks every key; null to run again. */
  private MultiDecision checkAcross(List<KeyedPolicy> checks, String[] keys, int[] order, int[] groups, int count,
      long cost, long nowMicros, Mark[] marks, long ledgerId) {
    State[] entries = new State[count];
    boolean[] created = new boolean[count];
    int locked = 0;
    try {
      for (int g = 0; g < count; g++) {
        int first = order[groups[g]];
        State entry = store.index.get(keys[first]);
        if (entry == null) { // the key's first state is its entry, as in checkAll; private until published
          Policy policy = checks.get(first).policy();
          entry = State.fresh(policy);
          entry.adopt(policy);
          created[g] = true;
        }
        entry.lock();
        entries[g] = entry;
        locked++;
      }
      return checkAcrossLocked(checks, keys, order, groups, count, entries, created, cost, nowMicros, marks,
          ledgerId);
    } finally {
      for (int g = locked - 1; g >= 0; g--) {
        entries[g].unlock();
      }
    }
  }

  /** {@link #checkAcross} with every entry locked; null when it must run again. */
  private MultiDecision checkAcrossLocked(List<KeyedPolicy> checks, String[] keys, int[] order, int[] groups,
      int count, State[] entries, boolean[] created, long cost, long nowMicros, Mark[] marks, long ledgerId) {
    for (int g = 0; g < count; g++) { // as checkAllLocked, before anything is consumed: running again is safe
      String key = keys[order[groups[g]]];
      State entry = entries[g];
      if (entry.removed || (!created[g] && store.dropIfExpired(key, entry))) {
        return null;
      }
      store.readopt(key, entry);
      if (!created[g] && !entry.kept) {
        store.promote(key, entry);
        if (entry.removed && !store.restore(key, entry)) {
          return null;
        }
      }
    }
    int n = checks.size();
    State[] found = new State[n];
    boolean[] fresh = new boolean[n];
    Decision[] decisions = new Decision[n];
    boolean allowed = true;
    boolean freshOnKnownKey = false;
    for (int g = 0; g < count; g++) {
      for (int at = groups[g]; at < groups[g + 1]; at++) {
        int i = order[at];
        Policy policy = checks.get(i).policy();
        State state = entries[g].find(policy);
        fresh[i] = state == null;
        found[i] = fresh[i] ? State.fresh(policy) : state;
        decisions[i] = State.check(found[i], policy, nowMicros, cost, false);
        allowed &= decisions[i].allowed();
        freshOnKnownKey |= fresh[i] && !created[g];
      }
    }
    if (!allowed) {
      return new MultiDecision(false, Arrays.asList(decisions));
    }
    long lag = store.clock.lag(nowMicros);
    // the new keys first: should one fail to publish, nothing has been consumed yet
    boolean holdsNewKeys = true;
    for (int g = 0; g < count && holdsNewKeys; g++) {
      holdsNewKeys = !created[g] || store.holdsNewKeys();
    }
    for (int g = 0; g < count; g++) {
      if (created[g]) {
        State entry = entries[g];
        for (int at = groups[g]; at < groups[g + 1]; at++) {
          int i = order[at];
          Policy policy = checks.get(i).policy();
          decisions[i] = State.check(found[i], policy, nowMicros, cost, true);
          if (marks != null) {
            marks[i] = found[i].reserved(policy, nowMicros, ledgerId);
          }
          if (fresh[i]) {
            entry.add(found[i], policy);
          }
          entry.settle(found[i], policy, lag);
          entry.kept |= cost >= policy.capacity(); // a first check that took one policy's all: it denies
        }
        if (holdsNewKeys && !store.publish(keys[order[groups[g]]], entry)) {
          withdraw(keys, order, groups, g, entries, created);
          return null; // another thread made the key's entry meanwhile: run again on it
        }
      }
    }
    if (holdsNewKeys) {
      for (int g = 0; g < count; g++) {
        if (created[g] && entries[g].kept) {
          store.adjustProbationBound();
          break;
        }
      }
    }
    boolean holdsNew = !freshOnKnownKey || store.holdsNewKeys();
    for (int g = 0; g < count; g++) {
      if (!created[g]) {
        applyKnown(checks, keys[order[groups[g]]], entries[g], order, groups[g], groups[g + 1], found, fresh,
            decisions, holdsNew, cost, nowMicros, lag, marks, ledgerId);
      }
    }
    return new MultiDecision(true, Arrays.asList(decisions));
  }

  /** Withdraws the new entries of groups before {@code upTo}, published by a cross-key check that runs again. */
  private void withdraw(String[] keys, int[] order, int[] groups, int upTo, State[] entries, boolean[] created) {
    boolean wasKept = false;
    for (int g = 0; g < upTo; g++) {
      if (created[g]) {
        State entry = entries[g];
        String key = keys[order[groups[g]]];
        entry.removed = true; // a thread waiting for its lock finds it removed and checks the key's next entry
        store.index.remove(key, entry);
        store.segment(entry).map.remove(key, entry);
        wasKept |= entry.kept;
      }
    }
    if (wasKept) {
      store.adjustProbationBound();
    }
  }

  /**
   * Applies the allowed pairs {@code order[from..to)} to {@code entry}, a known key's entry, its
   * lock held, as checkAllLocked does. Should the cache have dropped the entry meanwhile (a size
   * eviction, the only drop a held lock does not hold off) and another entry taken the key, the
   * pairs' consumption goes with the dropped entry, as if the cache had dropped it just after the
   * check: the other keys have consumed, so running again would consume twice there.
   */
  private void applyKnown(List<KeyedPolicy> checks, String key, State entry, int[] order, int from, int to,
      State[] found, boolean[] fresh, Decision[] decisions, boolean holdsNew, long cost, long nowMicros, long lag,
      Mark[] marks, long ledgerId) {
    boolean grew = false;
    long oldHold = entry.hold;
    long hold = Entry.UNCHANGED;
    for (int at = from; at < to; at++) {
      int i = order[at];
      Policy policy = checks.get(i).policy();
      decisions[i] = State.check(found[i], policy, nowMicros, cost, true);
      if (marks != null) {
        marks[i] = found[i].reserved(policy, nowMicros, ledgerId);
      }
      if (fresh[i]) {
        if (!holdsNew) {
          continue; // decided as a fresh state, not store.kept: the store.kept states fill the bound
        }
        entry.add(found[i], policy);
        grew = true;
      }
      long h = entry.settle(found[i], policy, lag);
      hold = h != Entry.UNCHANGED ? h : hold;
    }
    if (grew || hold != Entry.UNCHANGED) {
      store.beforeRenewal(oldHold);
    }
    if (grew) {
      store.kept.map.replace(key, entry, entry);
      store.adjustProbationBound();
    } else if (hold != Entry.UNCHANGED) {
      store.kept.expiration.setExpiresAfter(key, CacheClock.nanosUntil(hold, store.clock.latestNanos()), TimeUnit.NANOSECONDS);
    }
    store.readopt(key, entry);
    if (entry.removed) {
      store.restore(key, entry);
    }
  }
}

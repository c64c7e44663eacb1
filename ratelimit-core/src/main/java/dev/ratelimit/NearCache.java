package dev.ratelimit;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import dev.ratelimit.internal.LogThrottle;
import dev.ratelimit.memory.StateSnapshots;
import dev.ratelimit.spi.Evaluation;
import dev.ratelimit.spi.Keys;
import dev.ratelimit.spi.MultiEvaluation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Answers hot denied keys locally, exactly (ARCHITECTURE §6). A denial at {@code t} with
 * retryAfter {@code r} for cost {@code c} stays a denial for any cost {@code >= c} until
 * {@code t + r}: other instances can only consume more. The backend sends the state behind each
 * denial; until {@code t + r} the same Java algorithm the in-memory backend runs evaluates that
 * snapshot read-only, so {@code remaining} and {@code retryAfter} move with time and the cost
 * asked, as the backend's own answer would.
 *
 * <p>Any allowed answer from the backend replaces the key's entry with a marker of when it came
 * (its state moved); an answer older than the entry it would replace is ignored, so a denial that
 * was in flight during a newer allowed answer never comes back. A reset replaces the entry with a
 * marker whatever its time, and a denial from a call sent before a reset (which Redis may have
 * answered before the reset reached it) is not kept: calls note {@link #resets(String)} when they go out.
 * Entries are bounded in number and live no longer than their denial (measured in real time,
 * capped at an hour). A policy whose numbers changed never matches an entry of the old ones.
 *
 * <p>Every key it is given is already in its bounded form ({@link dev.ratelimit.spi.Keys#bounded}),
 * worked out once per call by the limiter: a long key is hashed once, not at each step.
 */
final class NearCache {
  private static final long MAX_LIFETIME_NANOS = Duration.ofHours(1).toNanos();
  private static final System.Logger LOG = System.getLogger(RateLimiter.class.getName());
  /** At most one line per policy every 10 s about snapshots that cannot be read. */
  private final LogThrottle badSnapshotLog = new LogThrottle(System::nanoTime, Duration.ofSeconds(10).toNanos());

  private final Cache<Id, Entry> entries;
  /** Resets made through this limiter, by stripe of the key, counted before each one's marker goes in. */
  private final AtomicLongArray resets = new AtomicLongArray(RESET_STRIPES);
  private static final int RESET_STRIPES = 64;

  NearCache(long maximumEntries) {
    this.entries = Caffeine.newBuilder()
        .maximumSize(maximumEntries)
        .expireAfter(new UntilTheDenialEnds())
        .executor(Runnable::run)
        .build();
  }

  /** The local answer to a check, or null when the backend must answer. */
  Decision answer(String key, Policy policy, long cost, long now) {
    Id id = new Id(key, policy.name(), policy.algorithm());
    Entry entry = entries.getIfPresent(id);
    if (entry == null || entry.state == null) {
      return null;
    }
    long t = now + entry.offset;
    if (!entry.denies(policy, cost, t)) {
      return null;
    }
    Decision decision = evaluate(id, entry, policy, t, cost);
    return decision == null || decision.allowed() ? null : decision;
  }

  /**
   * The entry's snapshot evaluated, or null (and the entry dropped, with a rate-limited warning)
   * when the snapshot is not one its algorithm reads: a backend's bug must not fail every later
   * check of the key, nor go unnoticed.
   */
  private Decision evaluate(Id id, Entry entry, Policy policy, long t, long cost) {
    try {
      StateSnapshots.Restored restored = entry.restored.state;
      if (restored == null) { // restored on the first answer, then kept: answers allocate no state
        restored = StateSnapshots.restore(policy, entry.state);
        entry.restored.state = restored;
      }
      return restored.evaluate(policy, t, cost);
    } catch (RuntimeException e) {
      entries.asMap().remove(id, entry);
      long suppressed = badSnapshotLog.tryAcquire(policy.name());
      if (suppressed >= 0) {
        LOG.log(System.Logger.Level.WARNING, "the near-cache could not read the state the backend sent with a denial"
            + " of policy '" + CheckArguments.printable(policy.name()) + "' (the backend and this limiter disagree: "
            + entry.state.length + (entry.state.length == 1 ? " number" : " numbers") + " for " + policy.algorithm()
            + "); the backend answers instead"
            + (suppressed > 0 ? " (" + suppressed + " more since the last line)" : "")
            + " (logged at most once every 10 s per policy)", e);
      }
      return null;
    }
  }

  /** The local answer to a multi-policy check, or null when the backend must answer. */
  MultiDecision answerAll(String key, List<Policy> policies, long cost, long now) {
    Entry[] found = new Entry[policies.size()];
    Id[] ids = new Id[policies.size()];
    boolean denier = false;
    String bounded = key;
    for (int i = 0; i < found.length; i++) {
      Policy policy = policies.get(i);
      ids[i] = new Id(bounded, policy.name(), policy.algorithm());
      found[i] = entries.getIfPresent(ids[i]);
      if (found[i] == null || found[i].state == null || !found[i].policy.equals(policy)
          || now + found[i].offset < found[i].takenAt) {
        return null;
      }
      denier |= found[i].denies(policy, cost, now + found[i].offset);
    }
    if (!denier) {
      return null;
    }
    List<Decision> decisions = new ArrayList<>(found.length);
    boolean anyDenied = false;
    for (int i = 0; i < found.length; i++) {
      Decision d = evaluate(ids[i], found[i], policies.get(i), now + found[i].offset, cost);
      if (d == null) {
        return null;
      }
      anyDenied |= !d.allowed();
      decisions.add(d);
    }
    return anyDenied ? new MultiDecision(false, decisions) : null;
  }

  /**
   * The resets so far of keys that share {@code key}'s stripe: noted before a backend call, handed
   * back with its answer to {@link #remember}. Striped by key, so that resets of other keys seldom
   * cost an in-flight denial its place.
   */
  long resets(String key) {
    return resets.get(stripe(key)); // the form entries are stored under (see store)
  }

  private static int stripe(String key) {
    int h = key.hashCode();
    return (h ^ (h >>> 16)) & (RESET_STRIPES - 1);
  }

  /**
   * Learns from the backend's answer to a check sent when {@link #resets(String)} was {@code
   * resetsBefore}; a denial is not kept when a reset of the key may have come since (it may describe
   * the state before the reset).
   */
  void remember(String key, Policy policy, long cost, long now, Evaluation evaluation, long resetsBefore) {
    Id id = new Id(key, policy.name(), policy.algorithm());
    Decision decision = evaluation.decision();
    long t = evaluation.nowMicros();
    if (decision.allowed() || evaluation.state() == null) {
      store(id, Entry.cleared(policy, t, t - now), resetsBefore);
    } else {
      store(id, new Entry(policy, evaluation.state(), t, t + decision.retryAfterMicros(), cost, t - now),
          resetsBefore);
    }
  }

  /** Learns from the backend's answer to a multi-policy check, as {@link #remember} does. */
  void rememberAll(String key, List<Policy> policies, long cost, long now, MultiEvaluation evaluation,
      long resetsBefore) {
    List<Decision> decisions = evaluation.decision().decisions();
    String bounded = key;
    for (int i = 0; i < policies.size(); i++) {
      Policy policy = policies.get(i);
      Id id = new Id(bounded, policy.name(), policy.algorithm());
      long[] state = evaluation.states() == null ? null : evaluation.states().get(i);
      long t = evaluation.nowMicros();
      if (evaluation.decision().allowed() || state == null) {
        store(id, Entry.cleared(policy, t, t - now), resetsBefore);
      } else {
        Decision d = decisions.get(i);
        long deniedUntil = d.allowed() ? Long.MIN_VALUE : t + d.retryAfterMicros();
        store(id, new Entry(policy, state, t, deniedUntil, cost, t - now), resetsBefore);
      }
    }
  }

  /**
   * Forgets {@code key} under {@code policy} (a reset, once the backend has made it): whatever the
   * entry's time, and denials of calls already under way are not kept when they come back.
   */
  void forget(String key, Policy policy, long now) {
    String bounded = key;
    resets.incrementAndGet(stripe(bounded)); // first: a denial stored after this sees it (see store)
    Id id = new Id(bounded, policy.name(), policy.algorithm());
    Entry current = entries.getIfPresent(id);
    long offset = current == null ? 0 : current.offset;
    // the marker replaces whatever is there (a denial may be later by the clock yet describe the
    // state before the reset) and keeps the later time, so that answers older than either stay out
    entries.asMap().merge(id, Entry.cleared(policy, now + offset, offset),
        (old, fresh) -> old.takenAt > fresh.takenAt ? Entry.cleared(policy, old.takenAt, offset) : fresh);
  }

  /**
   * Puts {@code entry} unless the entry there now was made at a later time (answers can race); a
   * denial becomes a marker when a reset of its key came after its call went out. Decided inside
   * the map's atomic compute, as {@link #forget} writes, so that a reset cannot slip between the
   * look at the count and the write.
   */
  private void store(Id id, Entry entry, long resetsBefore) {
    entries.asMap().compute(id, (k, old) -> {
      Entry fresh = entry.state != null && resets.get(stripe(id.key())) != resetsBefore
          ? Entry.cleared(entry.policy, entry.takenAt, entry.offset) : entry;
      return old == null || fresh.takenAt >= old.takenAt ? fresh : old;
    });
  }

  /** The number of entries held (approximate). */
  long size() {
    return entries.estimatedSize();
  }

  /** The bound it was built with (for tests). */
  long maximumEntries() {
    return entries.policy().eviction().orElseThrow().getMaximum();
  }

  /** An entry's identity; the key in its bounded form, so a long key costs no more than a short one. */
  private record Id(String key, String policyName, Algorithm algorithm) {}

  /**
   * A snapshot taken at {@code takenAt}; it denies cost {@code >= deniedCost} until
   * {@code deniedUntil} (Long.MIN_VALUE when its policy did not deny: then it only completes a
   * multi-policy answer). Times are the backend's ({@code offset} from the limiter's clock, zero
   * unless the backend decides on its own clock).
   */
  private record Entry(Policy policy, long[] state, long takenAt, long deniedUntil, long deniedCost,
      long offset, Restoration restored) {
    Entry(Policy policy, long[] state, long takenAt, long deniedUntil, long deniedCost, long offset) {
      this(policy, state, takenAt, deniedUntil, deniedCost, offset, state == null ? null : new Restoration());
    }

    /** A marker that the state moved at {@code takenAt}: no answer, and no older entry may replace it. */
    static Entry cleared(Policy policy, long takenAt, long offset) {
      return new Entry(policy, null, takenAt, Long.MIN_VALUE, Long.MAX_VALUE, offset);
    }

    boolean denies(Policy asked, long cost, long now) {
      return state != null && policy.equals(asked) && now >= takenAt && now < deniedUntil && cost >= deniedCost;
    }
  }

  /**
   * An entry's snapshot once restored (by the first answer that reads it; two threads may both
   * restore it, to the same result). Evaluating a restored snapshot changes nothing, so answers on
   * several threads share it.
   */
  private static final class Restoration {
    volatile StateSnapshots.Restored state;
  }

  /** In real time, an entry lives as long as its denial (an hour at most, 1 ms at least). */
  private static final class UntilTheDenialEnds implements Expiry<Id, Entry> {
    @Override
    public long expireAfterCreate(Id id, Entry entry, long currentTime) {
      if (entry.deniedUntil == Long.MIN_VALUE) {
        return Duration.ofSeconds(1).toNanos();
      }
      long micros = entry.deniedUntil - entry.takenAt;
      return Math.max(1_000_000L, Math.min(MAX_LIFETIME_NANOS, micros * 1_000L));
    }

    @Override
    public long expireAfterUpdate(Id id, Entry entry, long currentTime, long currentDuration) {
      return expireAfterCreate(id, entry, currentTime);
    }

    @Override
    public long expireAfterRead(Id id, Entry entry, long currentTime, long currentDuration) {
      return currentDuration;
    }
  }
}

package dev.ratelimit.memory;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.github.benmanes.caffeine.cache.RemovalCause;
import com.github.benmanes.caffeine.cache.Policy.Eviction;
import com.github.benmanes.caffeine.cache.Policy.VarExpiration;
import dev.ratelimit.spi.Keys;
import dev.ratelimit.Decision;
import dev.ratelimit.KeyedPolicy;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.Require;
import dev.ratelimit.internal.LogThrottle;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.spi.Command;
import dev.ratelimit.spi.Evaluation;
import dev.ratelimit.spi.Mark;
import dev.ratelimit.spi.MultiEvaluation;
import dev.ratelimit.spi.Reserved;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * The embedded backend: all six algorithms in Java, state in a bounded Caffeine cache.
 *
 * <p>State is kept per key: one entry holds the states of the policies used with that key (it is
 * the first of them), found with one lookup by the key itself, and each check is atomic under that
 * entry's own lock, held for that key's work only. Memory is bounded twice: at most
 * {@link Builder#maximumKeys(long) maximumKeys} states, of which those nearest to fresh go first
 * (see the builder), and
 * every key is dropped once its states stop mattering (are equivalent to fresh ones), at most one
 * slack later (the policy's window, at least a second and at most an hour; at least a margin of an
 * eighth of it, and half a second, later: see {@link Entry}). Until it is dropped, an expired
 * state simply behaves as a fresh one. Expiry follows the limiter's clock, the latest {@code now} the
 * backend was given (to within 100 ms), so a {@link dev.ratelimit.ManualClock} moves expiry too.
 *
 * <p>The hot path of a check on a known key is one lookup in a {@code ConcurrentHashMap} index beside
 * the cache, one uncontended lock and the algorithm's arithmetic: Caffeine's bookkeeping (access
 * order, frequency, expiry) is touched on one check in {@value #READ_SAMPLE} per key and when a
 * key's deadline passes its slack, not on every check.
 *
 * <p>Memory per key: one object per policy, the first of which is the key's entry (lock, expiry,
 * and 60 bytes of padding against false sharing, see {@link ColdPrefix}; the objects of further
 * policies carry the same fields unused, about 185 bytes each for GCRA); SLIDING_LOG adds one
 * {@code long} per admitted unit in the window (up to {@code limit}). With the cache entry and the
 * index entry, about 325 bytes per key for GCRA, the key string aside; a key is kept in its
 * {@linkplain dev.ratelimit.spi.Keys#bounded bounded form}, so a long one costs no more.
 */
public final class InMemoryBackend implements Backend {
  /** One check in this many of a key records its read with the cache (frequency and access order). */
  static final int READ_SAMPLE = 64;
  /** How far the clock moves before the cache's view of it is updated by a check, ns. */
  static final long TICK_NANOS = CacheClock.TICK_NANOS;
  private static final System.Logger LOG = System.getLogger(InMemoryBackend.class.getName());

  private static final VarHandle RESETS_STARTED;
  private static final VarHandle RESETS_DONE;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      RESETS_STARTED = lookup.findVarHandle(InMemoryBackend.class, "resetsStarted", long.class);
      RESETS_DONE = lookup.findVarHandle(InMemoryBackend.class, "resetsDone", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final long maximumKeys;
  /**
   * Keys checked once, whose check left room: the nearest to fresh, and the first to go when the
   * bound is reached. Bounded by what {@link #kept} leaves of {@code maximumKeys}.
   */
  private final Segment probation;
  /**
   * Keys checked again (allowed or denied), or whose first check took the whole capacity: kept
   * while they matter, whatever number of keys checked once comes after them.
   */
  final Segment kept;
  /** {@link #probation}'s bound now: {@code maximumKeys} less the states {@link #kept} holds. */
  private volatile long probationBound;
  /** Set when {@link #kept} dropped an entry: {@link #probationBound} may grow. */
  private volatile boolean boundStale;
  /** Whether a thread is adjusting {@link #probationBound} now. */
  private final AtomicBoolean adjusting = new AtomicBoolean();
  /** Set by each request to adjust {@link #probationBound}; cleared by the adjustment that serves it. */
  private volatile boolean adjustWanted;
  /** The cache's clock when a full store last asked the kept segment to free expired entries. */
  private volatile long fullCleanUpAt = Long.MIN_VALUE;
  /** Checks of new keys decided without keeping their state: the kept states filled the bound. */
  private final LongAdder notHeld = new LongAdder();
  /** The warning about a full store: one line a minute at most, counting those left out. */
  private final LogThrottle fullLog;
  /**
   * The same entries by key, for the hot path's lookup: one hash lookup straight to the entry. The
   * segments decide which entries stay (size, W-TinyLFU, expiry) and their eviction listeners remove
   * them from here; an entry is put here first, then in its segment, both under the entry's lock.
   */
  final ConcurrentHashMap<String, State> index = new ConcurrentHashMap<>();
  /** The limiter's clock as Caffeine sees it. */
  final CacheClock clock = new CacheClock();
  /**
   * Resets begun and finished. The cache's eviction listener notes {@link #resetsDone} on each entry
   * it drops; a check that puts such an entry back ({@link #restore}) keeps it only if no reset
   * finished since or is under way: such a reset may have found no entry to clear, and keeping the
   * entry would undo it.
   */
  private volatile long resetsStarted;
  private volatile long resetsDone;

  private final AllOrNothing allOrNothing = new AllOrNothing(this);
  private final Settlements settlements = new Settlements(this);

  private InMemoryBackend(long maximumKeys, LongSupplier nanoTime) {
    this.maximumKeys = maximumKeys;
    this.fullLog = new LogThrottle(nanoTime, TimeUnit.MINUTES.toNanos(1));
    this.probation = new Segment(maximumKeys, false);
    this.kept = new Segment(maximumKeys, true);
    this.probationBound = maximumKeys;
  }

  /**
   * One Caffeine cache of entries, with its views: {@link #probation} or {@link #kept}. An entry is
   * in the one its {@link Entry#kept} names.
   */
  final class Segment {
    final Cache<String, State> cache;
    final ConcurrentMap<String, State> map;
    final VarExpiration<String, State> expiration;
    final Eviction<String, State> eviction;

    Segment(long maximumWeight, boolean keeps) {
      this.cache = Caffeine.newBuilder()
          .maximumWeight(maximumWeight)
          .<String, State>weigher((key, entry) -> Math.max(1, entry.states))
          .expireAfter(new CacheClock.UntilHold())
          .ticker(clock::latestNanos)
          .executor(Runnable::run)
          .evictionListener((String key, State entry, RemovalCause cause) -> evicted(key, entry, cause, keeps))
          .build();
      this.map = cache.asMap();
      this.expiration = cache.policy().expireVariably().orElseThrow();
      this.eviction = cache.policy().eviction().orElseThrow();
    }
  }

  /** The segment {@code entry} is in. */
  Segment segment(State entry) {
    return entry.kept ? kept : probation;
  }

  /** A segment's eviction listener: the key's entry is dropped, unless it still matters or is moving. */
  private void evicted(String key, State entry, RemovalCause cause, boolean fromKept) {
    if (entry == null || entry.kept != fromKept) {
      return; // moving to the kept segment: it stays the key's entry
    }
    if (cause == RemovalCause.EXPIRED && (entry.isLocked() || CacheClock.nanos(entry.hold) > clock.latestNanos())) {
      // renewed, or being renewed, after the cache counted it expired (the cache's clock passed
      // the old hold while a check was moving it on, and the cache ignores a new expiry for an
      // entry it holds expired): the states still matter, so the entry stays the key's entry
      // and goes back in the cache on its next use
      entry.orphan = true;
      return;
    }
    entry.resetsWhenDropped = resetsDone; // before removed: a check that sees removed sees this
    entry.removed = true;
    index.remove(key, entry);
    if (fromKept) {
      boundStale = true;
    }
  }

  /** A backend holding at most 1,000,000 keys. */
  public static InMemoryBackend create() {
    return builder().build();
  }

  /** A builder for the bounds. */
  public static Builder builder() {
    return new Builder();
  }

  /** Runs {@code command} on this backend's state, in the caller's thread. */
  @Override
  @SuppressWarnings("unchecked") // each command's answer is the type its record names
  public <R> R execute(Command<R> command) {
    if (command instanceof Command.Check c) {
      return (R) new Evaluation(check(c.key(), c.policy(), c.cost(), c.nowMicros()), null, c.nowMicros());
    }
    if (command instanceof Command.CheckAll c) {
      return (R) new MultiEvaluation(checkAll(c.key(), c.policies(), c.cost(), c.nowMicros()), null, c.nowMicros());
    }
    if (command instanceof Command.CheckAcross c) {
      return (R) checkAll(c.checks(), c.cost(), c.nowMicros());
    }
    if (command instanceof Command.Inspect c) {
      return (R) inspect(c.key(), c.policy(), c.cost(), c.nowMicros());
    }
    if (command instanceof Command.Reserve c) {
      Mark[] marks = new Mark[c.policies().size()];
      MultiDecision d = allOrNothing.checkAll(c.key(), c.policies(), c.cost(), c.nowMicros(), marks, c.ledger());
      return (R) new Reserved(d, d.allowed() ? Arrays.asList(marks) : List.of(), c.nowMicros());
    }
    if (command instanceof Command.GiveBack c) {
      for (int i = 0; i < c.policies().size(); i++) {
        settlements.giveBack(c.key(), c.policies().get(i), c.units(), c.marks().get(i), c.nowMicros());
      }
      return null;
    }
    if (command instanceof Command.Charge c) {
      for (Policy policy : c.policies()) {
        settlements.charge(c.key(), policy, c.units(), c.nowMicros());
      }
      return null;
    }
    if (command instanceof Command.ReserveAcross c) {
      Mark[] marks = new Mark[c.checks().size()];
      MultiDecision d = allOrNothing.checkAll(c.checks(), c.cost(), c.nowMicros(), marks, c.ledger());
      return (R) new Reserved(d, d.allowed() ? Arrays.asList(marks) : List.of(), c.nowMicros());
    }
    if (command instanceof Command.GiveBackAcross c) {
      for (int i = 0; i < c.checks().size(); i++) {
        KeyedPolicy pair = c.checks().get(i);
        settlements.giveBack(pair.key(), pair.policy(), c.units(), c.marks().get(i), c.nowMicros());
      }
      return null;
    }
    if (command instanceof Command.ChargeAcross c) {
      for (KeyedPolicy pair : c.checks()) {
        settlements.charge(pair.key(), pair.policy(), c.units(), c.nowMicros());
      }
      return null;
    }
    Command.Reset c = (Command.Reset) command;
    reset(c.key(), c.policy(), c.nowMicros());
    return null;
  }

  /** True: reservations, their give-backs and charges, on every algorithm. */
  @Override
  public boolean reserves() {
    return true;
  }

  /** True: pairs of different keys are checked together, under every key's lock. */
  @Override
  public boolean checksAcrossKeys() {
    return true;
  }

  /** {@link Command.Check}: checks one policy and, when allowed, consumes {@code cost} units. */
  public Decision check(String key, Policy policy, long cost, long nowMicros) {
    return check(Keys.bounded(key), policy, cost, nowMicros, true);
  }

  /**
   * Whether {@link #check} would allow, with the same consumption, decided without building a
   * {@link Decision}: nothing is computed or allocated beyond whether the check passed. The
   * limiter's {@link dev.ratelimit.RateLimiter#tryAcquire} calls it when nothing needs the decision
   * (no listener, near-cache or shadow policies). Arguments as for {@link #check}: valid (the
   * limiter validates them; this method does not).
   */
  public boolean tryAcquire(String key, Policy policy, long cost, long nowMicros) {
    return check(Keys.bounded(key), policy, cost, nowMicros, false).allowed();
  }

  /** A check; without {@code detailed}, answered {@link State#ALLOWED} or {@link State#DENIED}. */
  private Decision check(String key, Policy policy, long cost, long nowMicros, boolean detailed) {
    long lag = clock.observe(nowMicros);
    for (;;) {
      State entry = index.get(key);
      if (entry == null) {
        State created = State.fresh(policy);
        Decision decision = State.check(created, policy, nowMicros, cost, true, detailed);
        if (!decision.allowed()) {
          return decision; // cannot happen for a valid cost; stores nothing
        }
        if (!holdsNewKeys()) {
          return decision; // decided as a fresh key, not kept: the kept states fill the bound
        }
        created.adopt(policy); // the key's first state is its entry
        created.kept = cost >= policy.capacity(); // a first check that took it all: it denies
        created.settle(created, policy, lag);
        created.lock();
        try {
          if (publish(key, created)) {
            if (created.kept) {
              adjustProbationBound();
            }
            return decision;
          }
        } finally {
          created.unlock();
        }
        continue; // another thread created the key first: check on its entry
      }
      Decision decision;
      entry.lock();
      try {
        decision = checkLocked(key, entry, policy, cost, nowMicros, lag, detailed);
      } finally {
        entry.unlock();
      }
      if (decision != null) {
        return decision;
      }
    }
  }

  /** A check on {@code entry}, its lock held; null when the entry was dropped: check again. */
  private Decision checkLocked(String key, State entry, Policy policy, long cost, long nowMicros, long lag,
      boolean detailed) {
    if (entry.removed || dropIfExpired(key, entry)) {
      return null;
    }
    readopt(key, entry);
    if (!entry.kept) {
      promote(key, entry); // checked again: no longer the nearest to fresh
      if (entry.removed && !restore(key, entry)) {
        return null;
      }
    }
    if ((entry.visits++ & (READ_SAMPLE - 1)) == 0) {
      kept.cache.getIfPresent(key); // records the read: W-TinyLFU's frequency, access order
    }
    State state = entry.find(policy);
    boolean added = state == null;
    if (added) {
      state = State.fresh(policy);
    }
    Decision decision = State.check(state, policy, nowMicros, cost, true, detailed);
    if (!decision.allowed()) {
      return decision;
    }
    if (added) {
      if (!holdsNewKeys()) {
        return decision; // decided as a fresh state, not kept: the kept states fill the bound
      }
      entry.add(state, policy);
    }
    long oldHold = entry.hold;
    long hold = entry.settle(state, policy, lag);
    if (added || hold != Entry.UNCHANGED) {
      beforeRenewal(oldHold);
    }
    if (added) {
      kept.map.replace(key, entry, entry); // weighs the entry again and renews its expiry
      adjustProbationBound();
    } else if (hold != Entry.UNCHANGED) {
      kept.expiration.setExpiresAfter(key, CacheClock.nanosUntil(hold, clock.latestNanos()), TimeUnit.NANOSECONDS);
    }
    readopt(key, entry);
    if (entry.removed && !restore(key, entry)) {
      return null; // dropped meanwhile and replaced, or reset: check again on the key's new entry
    }
    return decision;
  }

  /** {@link Command.CheckAll}: every policy of {@code rawKey}, all or nothing. */
  public MultiDecision checkAll(String rawKey, List<Policy> policies, long cost, long nowMicros) {
    return allOrNothing.checkAll(rawKey, policies, cost, nowMicros);
  }

  /**
   * Checks pairs of (possibly) different keys atomically: see {@link AllOrNothing#checkAll(List,
   * long, long)}.
   */
  public MultiDecision checkAll(List<KeyedPolicy> checks, long cost, long nowMicros) {
    return allOrNothing.checkAll(checks, cost, nowMicros);
  }

  /** {@link Command.Inspect} of a cost of 1. */
  public Decision inspect(String key, Policy policy, long nowMicros) {
    return inspect(key, policy, 1, nowMicros);
  }

  /** {@link Command.Inspect}: what a check of {@code cost} would decide now, nothing written. */
  public Decision inspect(String key, Policy policy, long cost, long nowMicros) {
    clock.observeExactly(nowMicros);
    State entry = index.get(Keys.bounded(key));
    if (entry != null) {
      entry.lock();
      try {
        State state = entry.find(policy);
        if (state != null) {
          return State.check(state, policy, nowMicros, cost, false);
        }
      } finally {
        entry.unlock();
      }
    }
    return State.check(State.fresh(policy), policy, nowMicros, cost, false);
  }

  /** {@link Command.Reset}: forgets the state of ({@code rawKey}, {@code policy}). */
  public void reset(String rawKey, Policy policy, long nowMicros) {
    String key = Keys.bounded(rawKey);
    clock.observeExactly(nowMicros);
    RESETS_STARTED.getAndAdd(this, 1L);
    try {
      State entry = index.get(key);
      if (entry == null) {
        return; // none, or one the cache dropped under a running check, which will not put it back
      }
      entry.lock();
      try {
        if (entry.remove(policy) && entry.states == 0) {
          entry.removed = true;
          index.remove(key, entry);
          segment(entry).map.remove(key, entry);
          if (entry.kept) {
            adjustProbationBound();
          }
        }
      } finally {
        entry.unlock();
      }
    } finally {
      RESETS_DONE.getAndAdd(this, 1L);
    }
  }

  /**
   * The number of (key, policy) states alive now on the limiter's clock as the backend last saw it:
   * the latest {@code now} of an {@code inspect}, {@code reset} or {@code checkAll} exactly, of a
   * {@code check} to within 100 ms. It walks every entry, so it is for tests and diagnostics, not for
   * a hot path.
   */
  public long size() {
    probation.cache.cleanUp();
    kept.cache.cleanUp();
    long now = clock.latestNanos() == Long.MIN_VALUE ? Long.MIN_VALUE : Math.floorDiv(clock.latestNanos(), 1_000L);
    long alive = 0;
    for (Segment segment : List.of(probation, kept)) {
      for (State entry : segment.map.values()) {
        entry.lock();
        try {
          alive += entry.alive(now);
        } finally {
          entry.unlock();
        }
      }
    }
    return alive;
  }

  /**
   * How many checks of new keys were decided as fresh keys without keeping their state, because
   * the states that still matter filled {@link Builder#maximumKeys maximumKeys} (see
   * {@link Builder#maximumKeys}): a figure to watch, and a sign to raise the bound when it grows.
   */
  public long keysNotHeld() {
    return notHeld.sum();
  }

  /**
   * How many keys the cache holds now on its clock, whether or not their states still matter (for
   * tests). Caffeine frees an expired entry's memory when its timer wheel reaches it, up to about a
   * second (or, for long expiries, a minute) later; its views skip expired entries at once.
   */
  long heldKeys() {
    probation.cache.cleanUp();
    kept.cache.cleanUp();
    return probation.map.keySet().stream().count() + kept.map.keySet().stream().count();
  }

  @Override
  public void close() {
    probation.cache.invalidateAll();
    kept.cache.invalidateAll();
    index.clear();
  }

  /**
   * Moves {@code entry}, whose lock is held, from probation to the kept segment. Should probation
   * drop it meanwhile, its listener sees it moving and leaves it the key's entry.
   */
  void promote(String key, State entry) {
    entry.kept = true;
    probation.map.remove(key, entry);
    if (!entry.removed) { // dropped before it moved: the key may have a new entry; restore decides
      kept.map.put(key, entry); // may evict another kept entry (only when kept states alone exceed the bound)
    }
    adjustProbationBound();
  }

  static boolean contains(boolean[] values, boolean value) {
    for (boolean v : values) {
      if (v == value) {
        return true;
      }
    }
    return false;
  }

  /**
   * For tests: drops {@code key}'s entry as a segment's size eviction would, whatever the bound (a
   * kept entry is evicted only when concurrent promotions overshoot the bound, which a test cannot
   * arrange on one thread).
   */
  void evictForTest(String key) {
    State entry = index.get(key);
    if (entry != null && segment(entry).map.remove(key, entry)) {
      evicted(key, entry, RemovalCause.SIZE, entry.kept);
    }
  }

  /**
   * Sets probation's bound to what the kept states leave of {@code maximumKeys}. One thread at a
   * time adjusts, and never waits for another: a thread that finds an adjustment running leaves its
   * request for the running one, which adjusts again before it stops. A burst of new keys on many
   * threads would otherwise queue every thread behind one lock, each for a pass of the caches'
   * maintenance.
   */
  void adjustProbationBound() {
    adjustWanted = true;
    while (adjustWanted && adjusting.compareAndSet(false, true)) {
      try {
        adjustWanted = false; // before reading: a change made after this read asks again
        boundStale = false;
        long room = Math.max(0, maximumKeys - kept.eviction.weightedSize().orElse(0));
        if (room != probationBound) {
          probationBound = room;
          probation.eviction.setMaximum(room);
        }
      } finally {
        adjusting.set(false);
      }
    }
  }

  /**
   * Whether a new key's state may be kept: false when the kept states fill {@code maximumKeys}. Then
   * the check is counted in {@link #keysNotHeld} and a warning is written through the limiter's one
   * {@link LogThrottle}: at most once a minute, saying how many lines it left out since the last.
   */
  boolean holdsNewKeys() {
    if (boundStale) {
      adjustProbationBound();
    }
    if (probationBound > 0) {
      return true;
    }
    long now = clock.latestNanos();
    if (now != fullCleanUpAt) { // the cache frees expired entries lazily: once per tick of its clock, ask it
      fullCleanUpAt = now;
      kept.cache.cleanUp();
      adjustProbationBound();
      if (probationBound > 0) {
        return true;
      }
    }
    notHeld.increment();
    long suppressed = fullLog.tryAcquire("full"); // the line is built only when written: a flood passes here
    if (suppressed >= 0) {
      LOG.log(System.Logger.Level.WARNING, "the in-memory rate limiter holds " + maximumKeys
          + " states that still matter (maximumKeys): checks of new keys are decided as fresh keys and"
          + " not kept until states expire; " + notHeld.sum() + " so far. Raise maximumKeys."
          + fullLog.note(suppressed));
    }
    return false;
  }

  /**
   * Puts {@code entry}, whose lock is held, back in the cache when the cache evicted it as expired
   * although it had been renewed (see the eviction listener): it never left the index, so no other
   * entry can have taken the key.
   */
  void readopt(String key, State entry) {
    if (entry.orphan && !entry.removed) {
      entry.orphan = false;
      segment(entry).map.put(key, entry);
    }
  }

  /** For tests: whether {@code key} has an entry now (the cache may drop one at any time). */
  boolean indexes(String key) {
    return index.containsKey(key);
  }

  /** For tests: runs just before a check tells the cache an entry's new expiry, given the old hold (µs). */
  volatile java.util.function.LongConsumer renewalHook;

  void beforeRenewal(long oldHold) {
    java.util.function.LongConsumer hook = renewalHook;
    if (hook != null) {
      hook.accept(oldHold);
    }
  }

  /**
   * Puts back an entry the cache dropped while a check (holding its lock) was changing it; false
   * when another entry took the key meanwhile, or when a reset finished since the entry was dropped
   * or is under way, so that the check must run again on the key's new entry: such a reset may have
   * found no entry to clear, and keeping this one would undo it. The entry goes back first and the
   * resets are read after: a reset that missed it had begun before it went back, so it is seen.
   */
  boolean restore(String key, State entry) {
    entry.removed = false;
    java.util.function.Consumer<String> hook = restoreHook;
    if (hook != null) {
      hook.accept(key);
    }
    if (!publish(key, entry)) {
      entry.removed = true;
      segment(entry).map.remove(key, entry); // a promotion may have put it back meanwhile
      return false;
    }
    long done = resetsDone;
    if (done != entry.resetsWhenDropped || resetsStarted != done) {
      entry.removed = true;
      index.remove(key, entry);
      segment(entry).map.remove(key, entry);
      return false;
    }
    return true;
  }

  /** For tests: runs when a check puts back an entry the cache dropped, before it goes back. */
  volatile java.util.function.Consumer<String> restoreHook;

  /**
   * Removes {@code entry}, whose lock is held, when the cache holds it expired (its hold has passed
   * on the cache's clock) and has not evicted it yet: its states no longer matter, and the cache
   * would not move the expiry of an entry it counts as gone. The check runs again on a new entry.
   */
  boolean dropIfExpired(String key, State entry) {
    if (entry.holdNanos > clock.latestNanos()) {
      return false;
    }
    entry.removed = true;
    index.remove(key, entry);
    segment(entry).map.remove(key, entry);
    return true;
  }

  /**
   * Makes {@code entry}, whose lock is held, the key's entry: in the index, then in the cache (which
   * may evict it at once, as it may any new key); false when the key has another entry already.
   */
  boolean publish(String key, State entry) {
    if (index.putIfAbsent(key, entry) != null) {
      return false;
    }
    segment(entry).map.put(key, entry);
    return true;
  }

  /** Configures an {@link InMemoryBackend}. */
  public static final class Builder {
    private long maximumKeys = 1_000_000;
    private LongSupplier nanoTime = System::nanoTime;

    private Builder() {}

    /**
     * The most (key, policy) states held at once; default 1,000,000. A key used with several
     * policies counts once per policy.
     *
     * <p>The bound never costs a limit to keys checked once: a key checked once, whose check left it
     * room, is on probation and goes first (among such keys, Caffeine's W-TinyLFU decides); a key
     * checked again, or whose first check took its whole capacity, is kept while its state matters,
     * however many keys are checked once after it. When the kept states alone reach the bound, a
     * check of a new key (or of a new policy on a kept key) is decided as a fresh one and its state
     * is not kept, until states stop mattering: no held limit is lifted, new keys go unlimited
     * meanwhile. {@link InMemoryBackend#keysNotHeld()} counts those checks, and a warning is logged
     * at most once a minute.
     */
    public Builder maximumKeys(long maximumKeys) {
      Require.argument(maximumKeys >= 1, "maximumKeys must be at least 1, was %s", maximumKeys);
      this.maximumKeys = maximumKeys;
      return this;
    }

    /** For tests: the clock of the full store's log throttle ({@link System#nanoTime} by default). */
    Builder nanoTime(LongSupplier nanoTime) {
      this.nanoTime = java.util.Objects.requireNonNull(nanoTime, "nanoTime");
      return this;
    }

    /** A new backend. */
    public InMemoryBackend build() {
      return new InMemoryBackend(maximumKeys, nanoTime);
    }
  }
}

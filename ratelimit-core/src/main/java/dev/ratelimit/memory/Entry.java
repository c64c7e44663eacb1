package dev.ratelimit.memory;

import dev.ratelimit.Policy;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * What a key holds besides its states: its lock and its expiry. Every check of the key runs between
 * {@link #lock()} and {@link #unlock()}. Only a cross-key check holds several keys' locks at once,
 * and takes them in one global order (by bounded key); every other operation holds one. All fields but
 * {@link #hold} and {@link #removed} are guarded by the lock.
 *
 * <p>A key's entry is its first {@link State} ({@code State} is the only subclass): the lock, the
 * expiry and the first policy's numbers are one object, so a check of the key's first policy reads
 * and writes one object (with {@link ColdPrefix}, normally on cache lines of its own), and a key
 * used with one policy costs one object. The states of further policies used with the key are
 * linked from it; their entry fields go unused (a check of such a policy reads the head and its
 * own state).
 *
 * <p>The lock is a spin lock: one compare-and-set to take it, one release store to leave it, about
 * half the cost of an uncontended {@code synchronized} on this JDK. Critical sections are a few
 * dozen nanoseconds of arithmetic (rarely a cache call), so a waiter spins briefly, then yields,
 * then parks for short spells (a holder descheduled on a busy machine does not make waiters burn
 * a core).
 *
 * <p>Expiry with slack: {@link #deadline} is the moment the last of the key's states stops
 * mattering; the cache is told a later moment, {@link #hold} = deadline + slack, where the slack is
 * the window of the policy whose check moves the hold, at least {@link #MIN_SLACK_MICROS} and at
 * most {@link #MAX_SLACK_MICROS}; and only when the deadline comes within that slack's margin of the
 * hold ({@link #renewAfter}) is the cache told again, so the hold
 * always stays at least that margin past the deadline. The margin is an eighth of the slack, at
 * least {@link #MIN_MARGIN_MICROS} (half the least slack). A key in use thus moves its expiry in the
 * cache at most about once per 7/8 of a window of clock time or per 7/8 of {@code limit} admitted
 * checks (windows of 4 s or more; shorter ones once per half a slack), instead of on every check,
 * and an idle key is dropped between one margin and one slack
 * (plus the cache clock's 100 ms granularity) after its states stop mattering; until then an
 * expired state simply behaves as a fresh one. The margin also gives a check that arrives with an
 * older {@code now} than others (a slow thread) at least half a second before the state it needs
 * can be dropped.
 */
abstract class Entry extends ColdPrefix {
  /** The least slack between a key's deadline and the moment the cache drops it, µs. */
  static final long MIN_SLACK_MICROS = 1_000_000;
  /** The most slack, µs: an hour. */
  static final long MAX_SLACK_MICROS = 3_600_000_000L;
  /** The least margin kept between a key's deadline and its hold, µs: half the least slack. */
  static final long MIN_MARGIN_MICROS = MIN_SLACK_MICROS / 2;
  /** {@link #settle}'s answer when the cache's expiry need not move. */
  static final long UNCHANGED = Long.MIN_VALUE;
  private static final int SPINS = 100;
  private static final long PARK_NANOS = 20_000;
  private static final VarHandle LOCK;

  static {
    try {
      LOCK = MethodHandles.lookup().findVarHandle(Entry.class, "locked", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** 1 while a thread holds the lock. */
  private volatile int locked;
  /** Checks made on this entry, for sampling reads recorded with the cache. */
  int visits;

  /** How many states the key has, this one included: the entry's weight in the cache. */
  int states;
  /** When the last of the states stops mattering, µs. */
  private long deadline;
  /** When the cache may drop this entry, µs; read by the cache's expiry. */
  volatile long hold;
  /** {@link #hold} in ns, saturated: compared with the cache's clock on every check. */
  long holdNanos;
  /**
   * The latest deadline the hold covers with its margin, µs: {@code hold − margin}, computed with
   * the slack of the policy that set the hold (the largest value when the hold never ends, the
   * smallest when there is none yet), so that a check compares one number.
   */
  private long renewAfter;
  /**
   * Set when the cache dropped this entry (expiry or size), or when {@code reset} removed it: a
   * thread holding it retries on the key's current entry.
   */
  volatile boolean removed;
  /**
   * Set once the key is checked again (or its first check took the whole capacity): the entry moves
   * from the backend's probation segment to its kept one. Written and read under the lock, but for
   * the cache's eviction listener, which handles either value it may see (see the backend's evicted).
   */
  boolean kept;
  /**
   * Set when the cache evicted this entry as expired after a check had renewed it: it is still the
   * key's entry (in the index) and goes back in the cache on its next use.
   */
  volatile boolean orphan;
  /**
   * The backend's count of finished resets when the cache dropped this entry (written before
   * {@link #removed}): a check putting the entry back keeps it only if no reset finished since.
   */
  long resetsWhenDropped;

  /**
   * Sets the expiry of a key's new entry: none yet. Only a key's first state is its entry, so only
   * it is set (the states of further policies leave these fields unused).
   */
  void startExpiry() {
    deadline = Long.MIN_VALUE;
    hold = Long.MIN_VALUE;
    holdNanos = Long.MIN_VALUE;
    renewAfter = Long.MIN_VALUE;
  }

  /** Takes the entry's lock; not reentrant. */
  void lock() {
    if (!LOCK.compareAndSet(this, 0, 1)) {
      lockContended();
    }
  }

  private void lockContended() {
    int spins = 0;
    while (locked != 0 || !LOCK.compareAndSet(this, 0, 1)) {
      if (++spins < SPINS) {
        Thread.onSpinWait();
      } else if (spins < 2 * SPINS) {
        Thread.yield();
      } else {
        LockSupport.parkNanos(PARK_NANOS); // the holder was descheduled (or is in the cache): stop burning a core
      }
    }
  }

  /** Whether a thread holds the lock now (a snapshot, for the cache's eviction listener). */
  boolean isLocked() {
    return locked != 0;
  }

  /** Leaves the lock: what was written under it is visible to the next holder. */
  void unlock() {
    LOCK.setRelease(this, 0);
  }

  /**
   * Records that {@code state} consumed (its check set its {@link State#expiresAt}): its expiry, the key's deadline and, when
   * the deadline moved past {@link #renewAfter} and within this policy's margin of the hold, a new
   * hold (always later than the old one). Returns the new hold (µs) that the cache must be
   * told, or {@link #UNCHANGED}.
   *
   * <p>{@code lag} is how far the check's {@code now} was behind the cache's clock (µs, at least 0):
   * the state's times are on the check's clock, the deadline and hold on the cache's, so after a
   * clock stepped back a state is kept as long after the cache's clock as it matters after the
   * check's own (Redis's TTLs are durations, too).
   */
  long settle(State state, Policy policy, long lag) {
    long expiresAt = state.expiresAt; // set by the check that consumed, as computeExpiresAt would
    assert expiresAt == State.computeExpiresAt(state, policy) : state;
    long due = expiresAt + lag;
    if (due < expiresAt) {
      due = Long.MAX_VALUE; // saturated
    }
    if (due > deadline) {
      deadline = due;
    }
    if (deadline <= renewAfter) {
      return UNCHANGED; // the hold stays at least a margin past the deadline
    }
    long slack = Math.min(Math.max(policy.windowMicros(), MIN_SLACK_MICROS), MAX_SLACK_MICROS);
    long covered = hold - margin(slack); // the latest deadline the hold covers with this policy's margin
    if (hold != Long.MIN_VALUE && deadline <= covered) {
      renewAfter = covered; // a shorter window's margin: the hold still covers the deadline, and never moves back
      return UNCHANGED;
    }
    long newHold = deadline + slack;
    hold = newHold < deadline ? Long.MAX_VALUE : newHold;
    renewAfter = hold == Long.MAX_VALUE ? Long.MAX_VALUE : hold - margin(slack);
    holdNanos = hold >= Long.MAX_VALUE / 1_000L ? Long.MAX_VALUE
        : hold <= Long.MIN_VALUE / 1_000L ? Long.MIN_VALUE : hold * 1_000L;
    return hold;
  }

  /** The least time kept between the deadline and the hold for {@code slack}: slack / 8, at least half a second. */
  static long margin(long slack) {
    return Math.max(slack / 8, MIN_MARGIN_MICROS);
  }
}

package dev.ratelimit.memory;

import dev.ratelimit.Policy;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * One key's states, one per policy used with the key (usually one), and the key's lock: every
 * check of the key runs between {@link #lock()} and {@link #unlock()}, and no lock is ever held
 * across two keys. All fields but {@link #hold} and {@link #removed} are guarded by the lock.
 *
 * <p>The lock is a spin lock: one compare-and-set to take it, one release store to leave it, about
 * half the cost of an uncontended {@code synchronized} on this JDK. Critical sections are a few
 * dozen nanoseconds of arithmetic (rarely a cache call), so a waiter spins briefly, then yields,
 * then parks for short spells (a holder descheduled on a busy machine does not make waiters burn
 * a core).
 *
 * <p>Expiry with slack: {@link #deadline} is the moment the last of the key's states stops
 * mattering; the cache is told a later moment, {@link #hold} = deadline + slack, where the slack is
 * the policy's window, at least {@link #MIN_SLACK_MICROS} and at most {@link #MAX_SLACK_MICROS}; and
 * only when the deadline comes within a margin of the hold is the cache told again, so the hold
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
final class Entry {
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

  /** The first of the key's states, linked by {@link State#next}. */
  private State head;
  /** How many states are linked: the entry's weight in the cache. */
  int states;
  /** When the last of the states stops mattering, µs. */
  private long deadline = Long.MIN_VALUE;
  /** When the cache may drop this entry, µs; read by the cache's expiry. */
  volatile long hold = Long.MIN_VALUE;
  /** {@link #hold} in ns, saturated: compared with the cache's clock on every check. */
  long holdNanos = Long.MIN_VALUE;
  /**
   * Set when the cache dropped this entry (expiry or size), or when {@code reset} removed it: a
   * thread holding it retries on the key's current entry.
   */
  volatile boolean removed;
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

  /** The state of {@code policy} (its name and algorithm), or null. */
  State find(Policy policy) {
    String name = policy.name();
    for (State s = head; s != null; s = s.next) {
      if (s.algorithm == policy.algorithm() && (s.policyName == name || s.policyName.equals(name))) {
        return s;
      }
    }
    return null;
  }

  /** Links {@code state} as the state of {@code policy}. */
  void add(State state, Policy policy) {
    state.policyName = policy.name();
    state.algorithm = policy.algorithm();
    state.next = head;
    head = state;
    states++;
  }

  /** Unlinks the state of {@code policy}; whether there was one. */
  boolean remove(Policy policy) {
    State previous = null;
    for (State s = head; s != null; previous = s, s = s.next) {
      if (s.algorithm == policy.algorithm() && s.policyName.equals(policy.name())) {
        if (previous == null) {
          head = s.next;
        } else {
          previous.next = s.next;
        }
        states--;
        return true;
      }
    }
    return false;
  }

  /**
   * Records that {@code state} consumed (its check set its {@link State#expiresAt}): its expiry, the key's deadline and, when
   * the deadline moved past the hold, a new hold. Returns the new hold (µs) that the cache must be
   * told, or {@link #UNCHANGED}.
   */
  long settle(State state, Policy policy) {
    long expiresAt = state.expiresAt; // set by the check that consumed, as computeExpiresAt would
    assert expiresAt == State.computeExpiresAt(state, policy) : state;
    if (expiresAt > deadline) {
      deadline = expiresAt;
    }
    long slack = Math.min(Math.max(policy.windowMicros(), MIN_SLACK_MICROS), MAX_SLACK_MICROS);
    if (hold == Long.MAX_VALUE || (hold != Long.MIN_VALUE && deadline <= hold - margin(slack))) {
      return UNCHANGED; // the hold stays at least a margin past the deadline
    }
    long newHold = deadline + slack;
    hold = newHold < deadline ? Long.MAX_VALUE : newHold;
    holdNanos = hold >= Long.MAX_VALUE / 1_000L ? Long.MAX_VALUE
        : hold <= Long.MIN_VALUE / 1_000L ? Long.MIN_VALUE : hold * 1_000L;
    return hold;
  }

  /** The least time kept between the deadline and the hold for {@code slack}: slack / 8, at least half a second. */
  static long margin(long slack) {
    return Math.max(slack / 8, MIN_MARGIN_MICROS);
  }

  /** How many states still matter at {@code now}. */
  int alive(long now) {
    int n = 0;
    for (State s = head; s != null; s = s.next) {
      n += s.expiresAt > now ? 1 : 0;
    }
    return n;
  }
}

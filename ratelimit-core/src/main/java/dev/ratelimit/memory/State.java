package dev.ratelimit.memory;

import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import dev.ratelimit.spi.Mark;
import java.time.Duration;

/**
 * The state of one (key, policy) and its algorithm, the Java twin of the policy's Lua script.
 * Not thread-safe: the backend serialises access per key. All times are epoch microseconds.
 *
 * <p>A key's first state is also its {@link Entry} (lock and expiry), the head of the key's states;
 * the states of further policies used with the key are linked from it by {@link #next}.
 */
abstract class State extends Entry {
  /**
   * When this state stops mattering (is equivalent to a fresh one), in epoch µs: set by every
   * {@link #check} that consumes to what {@link #computeExpiresAt} would answer then, from the
   * numbers the check has at hand (no second division, no second read of the log).
   */
  long expiresAt;
  /** The identity of the policy this state is for, within its key's {@link Entry}. */
  String policyName;
  dev.ratelimit.Algorithm algorithm;
  /** The next state of the same key (another policy), or null. */
  State next;
  /** The reservations recorded in this state, or null while there are none (see {@link Ledger}). */
  Ledger ledger;

  /** Makes this state the first of a new key's, for {@code policy}: the key's entry. */
  void adopt(Policy policy) {
    policyName = policy.name();
    algorithm = policy.algorithm();
    states = 1;
    startExpiry();
  }

  /** The state of {@code policy} (its name and algorithm) among this key's, or null; called on the head. */
  State find(Policy policy) {
    String name = policy.name();
    for (State s = this; s != null; s = s.next) {
      if (s.algorithm == policy.algorithm() && (s.policyName == name || s.policyName.equals(name))) {
        return s;
      }
    }
    return null;
  }

  /** Links {@code state} after this head as the state of {@code policy}. */
  void add(State state, Policy policy) {
    state.policyName = policy.name();
    state.algorithm = policy.algorithm();
    state.next = next;
    next = state;
    states++;
  }

  /**
   * Forgets the state of {@code policy} among this key's; whether there was one; called on the
   * head. A later state is unlinked; the head, which is the key's entry, is made fresh (vacant, see
   * {@link #vacant}). When no state is left but a vacant head, {@link #states} drops to 0: the
   * backend then drops the entry.
   */
  boolean remove(Policy policy) {
    State previous = null;
    for (State s = this; s != null; previous = s, s = s.next) {
      if (s.algorithm == policy.algorithm() && s.policyName.equals(policy.name())) {
        if (previous == null) {
          expiresAt = VACANT;
          ledger = null;
          clear();
        } else {
          previous.next = s.next;
          states--;
        }
        if (next == null && vacant()) {
          states = 0;
        }
        return true;
      }
    }
    return false;
  }

  /**
   * {@link #expiresAt} of a head whose policy was reset and has not consumed since: every check
   * that consumes sets a real moment, and a fresh state's {@link #computeExpiresAt} is this too.
   */
  static final long VACANT = Long.MIN_VALUE;

  /** Whether this head's own policy was reset and has not consumed since. */
  boolean vacant() {
    return expiresAt == VACANT;
  }

  /** How many of this key's states still matter at {@code now}; called on the head. */
  int alive(long now) {
    int n = 0;
    for (State s = this; s != null; s = s.next) {
      n += s.expiresAt > now ? 1 : 0;
    }
    return n;
  }

  /** Sets the algorithm's numbers to a fresh state's. */
  abstract void clear();

  /**
   * Evaluates a check of {@code c} units at {@code t}. When it is allowed and {@code consume} is
   * set, the state records the consumption; otherwise nothing changes. A consuming check without
   * {@code detailed} is answered {@link #ALLOWED} or {@link #DENIED}, of which only
   * {@code allowed()} means anything: nothing is computed or allocated for the rest of a decision.
   */
  abstract Decision check(Policy p, long t, long c, boolean consume, boolean detailed);

  /**
   * Records that the check just made at {@code t} consumed for a reservation: opens (or renews) the
   * state's {@link #ledger}, named {@code ledgerId} if new, and answers where the units went.
   */
  abstract Mark reserved(Policy p, long t, long ledgerId);

  /**
   * Gives back up to {@code units} of the reservation {@code mark} at {@code t}, as the algorithm's
   * rule allows (ARCHITECTURE §4, {@link Ledger}): possibly none. Sets {@link #expiresAt}.
   */
  abstract void giveBack(Policy p, long t, long units, Mark mark);

  /**
   * Consumes {@code units} at {@code t} whatever the limit (work already done), into debt bounded
   * by {@link Ledger#MAX_DEBT_MICROS} or {@link Ledger#MAX_COUNT}. Sets {@link #expiresAt}.
   */
  abstract void charge(Policy p, long t, long units);

  /** The answer of a check made without {@code detailed} that passed; never handed to a caller. */
  static final Decision ALLOWED = Decision.allowed(answerOnly(), 0, 0, 0);
  /** The answer of a check made without {@code detailed} that did not pass; never handed to a caller. */
  static final Decision DENIED = Decision.denied(answerOnly(), 0, 0, 0);

  private static Policy answerOnly() {
    return Policy.of(1, Duration.ofSeconds(1)).withName("answer-only");
  }

  /** When the current state stops mattering, in epoch µs. */
  abstract long computeExpiresAt(Policy p);

  /**
   * Sets this state from a backend's snapshot (the numbers a denying script returns, see
   * {@link StateSnapshots}); the layout is the algorithm's own.
   */
  abstract void restore(long[] snapshot);

  /**
   * {@link #check} of {@code s}, a state of {@code p}'s algorithm, dispatched on the algorithm: a
   * direct call to a final class that the JIT can inline, where a virtual call on a key's state
   * would be megamorphic as soon as a process uses three algorithms.
   */
  static Decision check(State s, Policy p, long t, long c, boolean consume) {
    return check(s, p, t, c, consume, true);
  }

  /** {@link #check(State, Policy, long, long, boolean)}, with or without a {@code detailed} answer. */
  static Decision check(State s, Policy p, long t, long c, boolean consume, boolean detailed) {
    return switch (p.algorithm()) {
      case FIXED_WINDOW -> ((FixedWindow) s).check(p, t, c, consume, detailed);
      case SLIDING_LOG -> ((SlidingLog) s).check(p, t, c, consume, detailed);
      case SLIDING_WINDOW -> ((SlidingWindow) s).check(p, t, c, consume, detailed);
      case TOKEN_BUCKET -> ((TokenBucket) s).check(p, t, c, consume, detailed);
      case GCRA, LEAKY_BUCKET -> ((Gcra) s).check(p, t, c, consume, detailed);
    };
  }

  /** {@link #computeExpiresAt} of {@code s}, dispatched as {@link #check(State, Policy, long, long, boolean)}. */
  static long computeExpiresAt(State s, Policy p) {
    return switch (p.algorithm()) {
      case FIXED_WINDOW -> ((FixedWindow) s).computeExpiresAt(p);
      case SLIDING_LOG -> ((SlidingLog) s).computeExpiresAt(p);
      case SLIDING_WINDOW -> ((SlidingWindow) s).computeExpiresAt(p);
      case TOKEN_BUCKET -> ((TokenBucket) s).computeExpiresAt(p);
      case GCRA, LEAKY_BUCKET -> ((Gcra) s).computeExpiresAt(p);
    };
  }

  static State fresh(Policy p) {
    return switch (p.algorithm()) {
      case FIXED_WINDOW -> new FixedWindow();
      case SLIDING_LOG -> new SlidingLog();
      case SLIDING_WINDOW -> new SlidingWindow();
      case TOKEN_BUCKET -> new TokenBucket();
      case GCRA, LEAKY_BUCKET -> new Gcra();
    };
  }

  /**
   * The window start {@code s = t − t mod W}; without a division when {@code t} lies in the window
   * starting at {@code start} (computed for the same {@code W}, as {@code startWindow} says) or in
   * the next one.
   */
  static long windowStart(long t, long window, long start, long startWindow) {
    if (window == startWindow) {
      long d = t - start;
      if (d >= 0 && d < window) {
        return start;
      }
      if (d >= window && d - window < window) {
        return start + window;
      }
    }
    return t - Math.floorMod(t, window);
  }

  /**
   * The window a windowed state whose newest window starts at {@code start} counts {@code t} in:
   * {@code t}'s own window, or the newer {@code start} (a key's time never goes back).
   */
  static long countingWindow(long t, long window, long start, long startWindow) {
    return Math.max(windowStart(t, window, start, startWindow), start);
  }

  /** {@code ceil(a / b)} for {@code b > 0}. */
  static long ceilDiv(long a, long b) {
    return -Math.floorDiv(-a, b);
  }
}

package dev.ratelimit.memory;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import dev.ratelimit.spi.Mark;

/**
 * GCRA and LEAKY_BUCKET: the theoretical arrival time {@code tat}. The emission interval
 * {@code T = W/L} is rarely a whole number of µs, so times are exact rationals
 * {@code us + frac/L} (with {@code 0 <= frac < L}): no rounding, no drift over any run.
 * LEAKY_BUCKET admits exactly as GCRA and adds {@code delay = tat − t} to admitted checks.
 * Twin of gcra.lua. Unlike the script, which divides {@code W} by {@code L} on every call, a state
 * keeps {@code q} and {@code r} for the policy object that last consumed on it ({@link #tuned}):
 * one division fewer per check (a few per cent of a check here, docs/benchmarks.md), 16 bytes more
 * per state. A policy of the same name with other numbers is another object, and is divided anew.
 */
final class Gcra extends State {
  private long tatUs;
  private long tatFrac;
  /** The policy whose {@code T = q + r/L} is {@link #q} and {@link #r}; null until one consumes. */
  private Policy tuned;
  private long q;
  private long r;

  Gcra() {
    clear();
  }

  @Override
  void clear() {
    tatUs = Long.MIN_VALUE;
    tatFrac = 0;
    tuned = null;
    q = 0;
    r = 0;
  }

  @Override
  Decision check(Policy p, long t, long c, boolean consume, boolean detailed) {
    long window = p.windowMicros();
    long limit = p.limit();
    long burst = p.burst();
    long q; // T = q + r/L
    long r;
    if (p == tuned) {
      q = this.q;
      r = this.r;
    } else {
      q = window / limit;
      r = window % limit;
      if (consume) { // under the key's lock; a check that consumes nothing writes nothing (the near-cache shares it)
        this.q = q;
        this.r = r;
        tuned = p;
      }
    }
    // tat = max(stored, t)
    long tu = tatUs;
    long tf = tatFrac;
    if (tu < t) {
      tu = t;
      tf = 0;
    }
    // new = tat + c·T (the fraction carries into whole µs only when it reaches L: no division
    // on most checks, and none at all when L divides W)
    long nf = tf + c * r;
    long nu = tu + c * q;
    if (nf >= limit) {
      nu += nf / limit;
      nf = nf % limit;
    }
    // allowAt = new − B·T, normalised so that 0 <= af < L
    long af = nf - burst * r;
    long au = nu - burst * q;
    if (af < 0 || af >= limit) {
      au += Math.floorDiv(af, limit);
      af = Math.floorMod(af, limit);
    }
    if (au < t || (au == t && af == 0)) {
      if (!consume) {
        long delay = p.algorithm() == Algorithm.LEAKY_BUCKET ? resetAfter(tu, tf, t) : 0; // tat − t
        return Decision.allowed(p, available(t, tu, tf, limit, burst, q, r, window),
            resetAfter(tu, tf, t), delay);
      }
      tatUs = nu;
      tatFrac = nf;
      long resetAfter = resetAfter(nu, nf, t);
      expiresAt = t + resetAfter; // tat rounded up
      if (!detailed) {
        return ALLOWED;
      }
      long delay = p.algorithm() == Algorithm.LEAKY_BUCKET ? resetAfter(tu, tf, t) : 0; // tat − t
      // gcra_available(t, new): new − B·T is allowAt, computed above
      return Decision.allowed(p, availableSince(t, au, af, limit, window), resetAfter, delay);
    }
    return detailed ? denied(p, t, tu, tf, au, af, q, r) : DENIED;
  }

  /** The denial at {@code t}: retryAfter = allowAt − t, rounded up to a whole µs. */
  private static Decision denied(Policy p, long t, long tu, long tf, long au, long af, long q, long r) {
    long retryAfter = au - t + (af > 0 ? 1 : 0);
    return Decision.denied(p, available(t, tu, tf, p.limit(), p.burst(), q, r, p.windowMicros()),
        retryAfter, resetAfter(tu, tf, t));
  }

  /** Mark: {@code tat + given} (see {@link Ledger}). */
  @Override
  Mark reserved(Policy p, long t, long ledgerId) {
    ledger = Ledger.openUntilTat(ledger, ledgerId, t, tatUs, tatFrac);
    return ledger.mark(tatUs, tatFrac, p.limit());
  }

  /** Lowers tat by what {@link Ledger#credit} allows; tat stays at or after {@code t}. */
  @Override
  void giveBack(Policy p, long t, long units, Mark mark) {
    long limit = p.limit();
    long g = Ledger.holds(ledger, mark, t) ? ledger.credit(mark, t, units, p.windowMicros(), limit) : 0;
    if (g > 0) {
      tatUs -= g / limit;
      tatFrac -= g % limit;
      if (tatFrac < 0) {
        tatUs--;
        tatFrac += limit;
      }
      ledger.given(g, limit);
    }
    expiresAt = computeExpiresAt(p);
  }

  /**
   * {@code tat = max(tat, t) + units·T}, whatever the limit; at most {@code 2^52 / W} units per
   * charge ({@code units·W} exact), and tat at most {@link Ledger#MAX_DEBT_MICROS} past {@code t}.
   */
  @Override
  void charge(Policy p, long t, long units) {
    long window = p.windowMicros();
    long limit = p.limit();
    long tu = tatUs;
    long tf = tatFrac;
    if (tu < t) {
      tu = t;
      tf = 0;
    }
    long credits = Math.min(units, Ledger.MAX_COUNT / window) * window; // units·T in 1/L µs
    long nu = tu + credits / limit;
    long nf = tf + credits % limit;
    if (nf >= limit) {
      nu++;
      nf -= limit;
    }
    if (nu - t > Ledger.MAX_DEBT_MICROS) {
      nu = t + Ledger.MAX_DEBT_MICROS;
      nf = 0;
    }
    tatUs = nu;
    tatFrac = nf;
    expiresAt = computeExpiresAt(p);
  }

  /** For tests: {@code [tatMicros, tatFraction]}, what {@link #restore} takes. */
  long[] snapshot() {
    return new long[] {tatUs, tatFrac};
  }

  /** Snapshot: {@code [tatMicros, tatFraction]}. */
  @Override
  void restore(long[] snapshot) {
    tatUs = snapshot[0];
    tatFrac = snapshot[1];
  }

  /** How many cost-1 checks would pass now: floor((t − (tat − B·T)) / T), at least 0. */
  private static long available(long t, long tu, long tf, long limit, long burst, long q, long r,
      long window) {
    long af = tf - burst * r;
    long au = tu - burst * q;
    if (af < 0 || af >= limit) {
      au += Math.floorDiv(af, limit);
      af = Math.floorMod(af, limit);
    }
    return availableSince(t, au, af, limit, window);
  }

  /** {@link #available} given {@code tat − B·T = au + af/L}. */
  private static long availableSince(long t, long au, long af, long limit, long window) {
    long scaled = (t - au) * limit - af;
    return scaled <= 0 ? 0 : scaled / window;
  }

  /** ceil(tat − t) for a tat of {@code us + frac/L}. */
  private static long resetAfter(long us, long frac, long t) {
    return us - t + (frac > 0 ? 1 : 0);
  }

  @Override
  long computeExpiresAt(Policy p) {
    return tatUs == Long.MIN_VALUE ? Long.MIN_VALUE : tatUs + (tatFrac > 0 ? 1 : 0);
  }
}

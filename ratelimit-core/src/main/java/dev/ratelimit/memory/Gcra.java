package dev.ratelimit.memory;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.Policy;

/**
 * GCRA and LEAKY_BUCKET: the theoretical arrival time {@code tat}. The emission interval
 * {@code T = W/L} is rarely a whole number of µs, so times are exact rationals
 * {@code us + frac/L} (with {@code 0 <= frac < L}): no rounding, no drift over any run.
 * LEAKY_BUCKET admits exactly as GCRA and adds {@code delay = tat − t} to admitted checks.
 * Twin of gcra.lua.
 */
final class Gcra extends State {
  private long tatUs;
  private long tatFrac;

  Gcra() {
    clear();
  }

  @Override
  void clear() {
    tatUs = Long.MIN_VALUE;
    tatFrac = 0;
  }

  @Override
  Decision check(Policy p, long t, long c, boolean consume, boolean detailed) {
    long window = p.windowMicros();
    long limit = p.limit();
    long burst = p.burst();
    long q = window / limit; // T = q + r/L
    long r = window % limit;
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

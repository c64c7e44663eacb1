package dev.ratelimit.memory;

import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import dev.ratelimit.spi.Mark;

/**
 * TOKEN_BUCKET: capacity B, refilled at L per W. Tokens are kept in credits of 1/W token, so the
 * refill is exactly L credits per µs and a unit costs W credits: no rounding, no drift. A new
 * bucket is full. Twin of token_bucket.lua. A forced {@link #charge} may leave credits below 0 (a
 * debt), down to {@code -2^52}.
 */
final class TokenBucket extends State {
  private long credits;
  private long last;

  TokenBucket() {
    clear();
  }

  /** {@link #last} of a bucket that never consumed (a full one). */
  private static final long FRESH = Long.MIN_VALUE;

  @Override
  void clear() {
    credits = 0;
    last = FRESH;
  }

  @Override
  Decision check(Policy p, long t, long c, boolean consume, boolean detailed) {
    long window = p.windowMicros();
    long limit = p.limit();
    long capacity = p.burst() * window;
    boolean fresh = last == FRESH;
    long tokens = capacity;
    long lag = 0; // a late check (t before the last refill): the bucket refills from last, not from t
    if (!fresh) {
      long elapsed = Math.max(0, t - last);
      lag = Math.max(0, last - t);
      long missing = capacity - credits;
      tokens = missing <= 0 || refills(elapsed, limit, missing) ? capacity : credits + elapsed * limit;
    }
    long need = c * window;
    if (tokens >= need) {
      if (consume) {
        tokens -= need;
        credits = tokens;
        last = fresh ? t : Math.max(last, t);
      }
      long missing = capacity - tokens; // >= 0
      long untilFull = missing == 0 ? 0 : (missing - 1) / limit + 1; // ceil without floorDiv's sign fix-up
      if (consume) {
        expiresAt = last + untilFull;
      }
      if (!detailed) {
        return ALLOWED;
      }
      return Decision.allowed(p, tokens / window, untilFull == 0 ? 0 : lag + untilFull, 0);
    }
    if (!detailed) {
      return DENIED;
    }
    return Decision.denied(p, Math.max(0, tokens) / window, lag + ceilDiv(need - tokens, limit),
        lag + ceilDiv(capacity - tokens, limit));
  }

  /**
   * Whether {@code elapsed} µs refill more than {@code missing} credits, {@code elapsed > missing / L}
   * in the script, as {@code elapsed·L > missing} without overflow and without a division.
   */
  private static boolean refills(long elapsed, long limit, long missing) {
    long credited = elapsed * limit;
    return Math.multiplyHigh(elapsed, limit) != 0 || credited < 0 || credited > missing;
  }

  /** The tokens at {@code max(t, last)}, in credits, as a check counts them; changes nothing. */
  private long tokensAt(long t, long capacity, long limit) {
    if (last == FRESH) {
      return capacity;
    }
    long elapsed = Math.max(0, t - last);
    long missing = capacity - credits;
    return missing <= 0 || refills(elapsed, limit, missing) ? capacity : credits + elapsed * limit;
  }

  /**
   * Mark: as GCRA's, {@code tat + given}, for the bucket's equivalent {@code tat = last +
   * (capacity − credits)/L} (a credit is 1/L µs of it).
   */
  @Override
  Mark reserved(Policy p, long t, long ledgerId) {
    long limit = p.limit();
    long missing = p.burst() * p.windowMicros() - credits; // >= 0 after a check
    long tatUs = last + missing / limit;
    long tatFrac = missing % limit;
    ledger = Ledger.openUntilTat(ledger, ledgerId, t, tatUs, tatFrac);
    return ledger.mark(tatUs, tatFrac, limit);
  }

  /** Refills to {@code max(t, last)}, then adds what {@link Ledger#credit} allows; never past capacity. */
  @Override
  void giveBack(Policy p, long t, long units, Mark mark) {
    long window = p.windowMicros();
    long limit = p.limit();
    long at = Math.max(t, last);
    long g = last != FRESH && Ledger.holds(ledger, mark, t) ? ledger.credit(mark, at, units, window, limit) : 0;
    if (g > 0) {
      long capacity = p.burst() * window;
      credits = Math.min(capacity, tokensAt(t, capacity, limit) + g);
      last = at;
      ledger.given(g, limit);
    }
    expiresAt = computeExpiresAt(p);
  }

  /**
   * Refills to {@code max(t, last)}, then takes {@code units·W} credits whatever the limit: at most
   * {@code 2^52 / W} units per charge, and credits no lower than {@code -2^52}.
   */
  @Override
  void charge(Policy p, long t, long units) {
    long window = p.windowMicros();
    long capacity = p.burst() * window;
    long tokens = tokensAt(t, capacity, p.limit());
    last = last == FRESH ? t : Math.max(t, last);
    credits = Math.max(-Ledger.MAX_COUNT, tokens - Math.min(units, Ledger.MAX_COUNT / window) * window);
    expiresAt = computeExpiresAt(p);
  }

  /** Snapshot: {@code [credits, last]}. */
  @Override
  void restore(long[] snapshot) {
    credits = snapshot[0];
    last = snapshot[1];
  }

  @Override
  long computeExpiresAt(Policy p) {
    long capacity = p.burst() * p.windowMicros();
    return last == FRESH ? Long.MIN_VALUE : last + ceilDiv(Math.max(0, capacity - credits), p.limit());
  }
}

package dev.ratelimit.memory;

import dev.ratelimit.Decision;
import dev.ratelimit.Policy;

/**
 * TOKEN_BUCKET: capacity B, refilled at L per W. Tokens are kept in credits of 1/W token, so the
 * refill is exactly L credits per µs and a unit costs W credits: no rounding, no drift. A new
 * bucket is full. Twin of token_bucket.lua.
 */
final class TokenBucket extends State {
  private long credits;
  private long last;

  TokenBucket() {
    clear();
  }

  @Override
  void clear() {
    credits = -1;
    last = 0;
  }

  @Override
  Decision check(Policy p, long t, long c, boolean consume, boolean detailed) {
    long window = p.windowMicros();
    long limit = p.limit();
    long capacity = p.burst() * window;
    boolean fresh = credits < 0;
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
    return Decision.denied(p, tokens / window, lag + ceilDiv(need - tokens, limit),
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

  /** Snapshot: {@code [credits, last]}. */
  @Override
  void restore(long[] snapshot) {
    credits = snapshot[0];
    last = snapshot[1];
  }

  @Override
  long computeExpiresAt(Policy p) {
    long capacity = p.burst() * p.windowMicros();
    return credits < 0 ? Long.MIN_VALUE : last + ceilDiv(Math.max(0, capacity - credits), p.limit());
  }
}

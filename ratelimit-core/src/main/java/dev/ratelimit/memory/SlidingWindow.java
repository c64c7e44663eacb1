package dev.ratelimit.memory;

import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import dev.ratelimit.spi.Mark;

/**
 * SLIDING_WINDOW (counter): the previous window's count {@code p} weighted by the part of it still
 * inside the sliding window, plus the current window's count {@code n}. All arithmetic is in
 * integers scaled by W, so the estimate is exact. Twin of sliding_window.lua. A key's time never
 * goes back: a check stamped before the key's newest window counts in that window, decided at its
 * start (the previous window weighs in whole), with retryAfter measured from its own {@code now}.
 */
final class SlidingWindow extends State {
  private long start;
  private long previous;
  private long current;
  /** The window {@code start} was computed for (0: unknown). */
  private long startWindow;

  SlidingWindow() {
    clear();
  }

  @Override
  void clear() {
    start = Long.MIN_VALUE;
    previous = 0;
    current = 0;
    startWindow = 0;
  }

  @Override
  Decision check(Policy p, long t, long c, boolean consume, boolean detailed) {
    long window = p.windowMicros();
    long limit = p.limit();
    long s = countingWindow(t, window, start, startWindow); // t − t mod W, or the key's newer window
    long prev = 0;
    long n = 0;
    if (start == s) {
      prev = previous;
      n = current;
    } else if (start == s - window) {
      prev = current;
    }
    long elapsed = Math.max(0, t - s); // a check stamped before its window is decided at the window's start
    // estimate·W = prev·(W − elapsed) + n·W; allow iff estimate + c <= limit
    long weighted = prev * (window - elapsed);
    if (weighted <= (limit - n - c) * window) {
      if (consume) {
        if (start != s) { // a newer window: s was computed from t, so it is aligned to W
          start = s;
          startWindow = window;
        }
        n += c;
        previous = prev;
        current = n;
        expiresAt = s + 2 * window;
      }
      if (!detailed) {
        return ALLOWED;
      }
      long remaining = limit - n - ceilDiv(weighted, window);
      long resetAfter = n > 0 ? s + 2 * window - t : prev > 0 ? s + window - t : 0;
      return Decision.allowed(p, remaining, resetAfter, 0);
    }
    if (!detailed) {
      return DENIED;
    }
    long remaining = Math.max(0, limit - n - ceilDiv(weighted, window));
    long resetAfter = n > 0 ? s + 2 * window - t : s + window - t;
    return Decision.denied(p, remaining, retryAt(s, window, limit, prev, n, c) - t, resetAfter);
  }

  /** Mark: the window the reservation counted in. */
  @Override
  Mark reserved(Policy p, long t, long ledgerId) {
    ledger = Ledger.open(ledger, ledgerId, t, start + p.windowMicros());
    return new Mark(start, 0, ledger.id);
  }

  /**
   * Gives back into the reservation's window while it is the current one; once it is the previous
   * window (weighted, decaying) or older, it takes nothing.
   */
  @Override
  void giveBack(Policy p, long t, long units, Mark mark) {
    if (Ledger.holds(ledger, mark, t) && start == mark.at()
        && countingWindow(t, p.windowMicros(), start, startWindow) == start) {
      current = Math.max(0, current - units);
    }
    expiresAt = computeExpiresAt(p);
  }

  /**
   * Counts {@code units} in the current window, up to twice the limit: the estimate's arithmetic
   * ({@code previous·W}) stays exact in Lua's doubles, and a debt of a whole window more already
   * denies every check until the next window but one.
   */
  @Override
  void charge(Policy p, long t, long units) {
    long window = p.windowMicros();
    long s = countingWindow(t, window, start, startWindow);
    if (start != s) {
      previous = start == s - window ? current : 0;
      current = 0;
      start = s;
      startWindow = window;
    }
    current = Math.min(2 * p.limit(), current + Math.min(units, 2 * p.limit()));
    expiresAt = s + 2 * window;
  }

  /** Snapshot: {@code [windowStart, previousCount, currentCount]}. */
  @Override
  void restore(long[] snapshot) {
    start = snapshot[0];
    startWindow = 0;
    previous = snapshot[1];
    current = snapshot[2];
  }

  /**
   * The first moment the estimate plus {@code c} fits: in this window when the previous count
   * decays enough, else in the next (where this window's count decays), else the one after.
   */
  private static long retryAt(long s, long window, long limit, long prev, long n, long c) {
    long room = limit - n - c;
    if (room >= 0 && prev > 0) {
      long x = window - Math.floorDiv(room * window, prev);
      if (x < window) {
        return s + x;
      }
    }
    long nextRoom = limit - c;
    if (n <= nextRoom) {
      return s + window;
    }
    long x = window - Math.floorDiv(nextRoom * window, n);
    return x < window ? s + window + x : s + 2 * window;
  }

  @Override
  long computeExpiresAt(Policy p) {
    long window = p.windowMicros();
    return current > 0 ? start + 2 * window : previous > 0 ? start + window : Long.MIN_VALUE;
  }
}

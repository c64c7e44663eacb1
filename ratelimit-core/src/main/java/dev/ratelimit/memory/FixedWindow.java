package dev.ratelimit.memory;

import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import dev.ratelimit.spi.Mark;

/**
 * FIXED_WINDOW: a count {@code n} for the window starting at {@code s}; twin of fixed_window.lua.
 * A key's time never goes back: a check stamped before the key's newest window (a slow thread's
 * {@code now}, or a clock stepped back) is counted in that newest window, and its retryAfter is
 * measured from its own {@code now}, so a step back never reopens a window.
 */
final class FixedWindow extends State {
  private long start;
  private long count;
  /** The window {@code start} was computed for (0: unknown). */
  private long startWindow;

  FixedWindow() {
    clear();
  }

  @Override
  void clear() {
    start = Long.MIN_VALUE;
    count = 0;
    startWindow = 0;
  }

  @Override
  Decision check(Policy p, long t, long c, boolean consume, boolean detailed) {
    long window = p.windowMicros();
    long limit = p.limit();
    long s = countingWindow(t, window, start, startWindow); // t − t mod W, or the key's newer window
    long n = start == s ? count : 0;
    long windowEnd = s + window - t;
    if (n + c <= limit) {
      if (consume) {
        n += c;
        if (start != s) { // a newer window: s was computed from t, so it is aligned to W
          start = s;
          startWindow = window;
        }
        count = n;
        expiresAt = s + window;
      }
      if (!detailed) {
        return ALLOWED;
      }
      return Decision.allowed(p, limit - n, n > 0 ? windowEnd : 0, 0);
    }
    if (!detailed) {
      return DENIED;
    }
    return Decision.denied(p, Math.max(0, limit - n), windowEnd, windowEnd);
  }

  /** Mark: the window the reservation counted in. */
  @Override
  Mark reserved(Policy p, long t, long ledgerId) {
    ledger = Ledger.open(ledger, ledgerId, t, start + p.windowMicros());
    return new Mark(start, 0, ledger.id);
  }

  /** Gives back into the reservation's window while it is the current one; an ended window takes nothing. */
  @Override
  void giveBack(Policy p, long t, long units, Mark mark) {
    if (Ledger.holds(ledger, mark, t) && start == mark.at()
        && countingWindow(t, p.windowMicros(), start, startWindow) == start) {
      count = Math.max(0, count - units);
    }
    expiresAt = computeExpiresAt(p);
  }

  @Override
  void charge(Policy p, long t, long units) {
    long window = p.windowMicros();
    long s = countingWindow(t, window, start, startWindow);
    if (start != s) {
      start = s;
      startWindow = window;
      count = 0;
    }
    count = Math.min(Ledger.MAX_COUNT, count + units);
    expiresAt = s + window;
  }

  /** Snapshot: {@code [windowStart, count]}. */
  @Override
  void restore(long[] snapshot) {
    start = snapshot[0];
    startWindow = 0;
    count = snapshot[1];
  }

  @Override
  long computeExpiresAt(Policy p) {
    return start + p.windowMicros();
  }
}

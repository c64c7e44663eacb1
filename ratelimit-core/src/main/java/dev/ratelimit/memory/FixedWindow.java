package dev.ratelimit.memory;

import dev.ratelimit.Decision;
import dev.ratelimit.Policy;

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
    long s = windowStart(t, window, start, startWindow); // t − t mod W
    if (start > s) {
      s = start; // the key's newest window: time never goes back
    }
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

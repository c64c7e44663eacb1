package dev.ratelimit.memory;

import dev.ratelimit.Decision;
import dev.ratelimit.Policy;

/**
 * FIXED_WINDOW: a count {@code n} for the window starting at {@code s}; twin of fixed_window.lua,
 * which keeps one key per window. Here the newest window and the one before it are kept, so that a
 * late check (a {@code now} read before another thread's, in the window before) is counted in its
 * own window, as Redis counts it in that window's key, and never rolls the newer window back.
 */
final class FixedWindow extends State {
  private long start;
  private long count;
  /** The count of the window before {@code start}. */
  private long previous;
  /** The window {@code start} was computed for (0: unknown). */
  private long startWindow;

  FixedWindow() {
    clear();
  }

  @Override
  void clear() {
    start = Long.MIN_VALUE;
    count = 0;
    previous = 0;
    startWindow = 0;
  }

  @Override
  Decision check(Policy p, long t, long c, boolean consume, boolean detailed) {
    long window = p.windowMicros();
    long limit = p.limit();
    long s = windowStart(t, window, start, startWindow); // t − t mod W
    boolean sameLength = startWindow == window; // a policy's window may change under its name
    long n = start == s ? count : sameLength && s == start - window ? previous : 0;
    long windowEnd = s + window - t;
    if (n + c <= limit) {
      if (consume) {
        if (s == start && sameLength) {
          count = n + c;
        } else if (s >= start) { // a newer window (this one becomes the one before), or a new length
          previous = sameLength && s == start + window ? count : 0;
          start = s;
          startWindow = window;
          count = n + c;
          expiresAt = s + window;
        } else if (sameLength && s == start - window) { // a late check: the window before, still remembered
          previous = n + c;
        } // older still: its window was over before the newest began; nothing to keep
        n += c;
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
    previous = 0;
  }

  @Override
  long computeExpiresAt(Policy p) {
    return start + p.windowMicros();
  }
}

package dev.ratelimit.memory;

import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import java.util.Arrays;

/**
 * SLIDING_LOG: one timestamp per accepted unit, oldest first, in a ring; the units in
 * {@code (t - W, t]} count. Twin of sliding_log.lua.
 */
final class SlidingLog extends State {
  private long[] log = new long[4];
  private int head;
  private int size;

  @Override
  Decision check(Policy p, long t, long c, boolean consume) {
    long window = p.windowMicros();
    long limit = p.limit();
    int expired = 0;
    while (expired < size && at(expired) <= t - window) {
      expired++;
    }
    long n = size - expired;
    if (n + c <= limit) {
      if (consume) {
        drop(expired);
        append(t, (int) c);
        n += c;
      }
      long resetAfter = n > 0 ? at(size - 1) + window - t : 0;
      if (consume) {
        expiresAt = t + resetAfter; // the newest entry + W
      }
      return Decision.allowed(p, limit - n, resetAfter, 0);
    }
    long need = n + c - limit; // 1 <= need <= n because c <= limit
    long retryAfter = at(expired + (int) need - 1) + window - t;
    long resetAfter = at(size - 1) + window - t;
    return Decision.denied(p, Math.max(0, limit - n), retryAfter, resetAfter);
  }

  /** Snapshot: the timestamps of the units in the window, oldest first. */
  @Override
  void restore(long[] snapshot) {
    int capacity = Math.max(4, Integer.highestOneBit(Math.max(1, snapshot.length - 1)) << 1);
    log = new long[capacity];
    System.arraycopy(snapshot, 0, log, 0, snapshot.length);
    head = 0;
    size = snapshot.length;
  }

  @Override
  long computeExpiresAt(Policy p) {
    return size == 0 ? Long.MIN_VALUE : at(size - 1) + p.windowMicros();
  }

  private long at(int i) {
    return log[(head + i) & (log.length - 1)];
  }

  private void drop(int count) {
    head = (head + count) & (log.length - 1);
    size -= count;
  }

  /** Appends {@code c} entries at {@code t}, keeping the log sorted if the clock stepped back. */
  private void append(long t, int c) {
    if (size + c > log.length) {
      int capacity = Integer.highestOneBit(size + c - 1) << 1;
      long[] grown = new long[capacity];
      for (int i = 0; i < size; i++) {
        grown[i] = at(i);
      }
      log = grown;
      head = 0;
    }
    int mask = log.length - 1;
    int insert = size;
    while (insert > 0 && at(insert - 1) > t) {
      insert--;
    }
    for (int i = size - 1; i >= insert; i--) {
      log[(head + i + c) & mask] = log[(head + i) & mask];
    }
    for (int i = 0; i < c; i++) {
      log[(head + insert + i) & mask] = t;
    }
    size += c;
  }

  @Override
  public String toString() {
    long[] copy = new long[size];
    Arrays.setAll(copy, this::at);
    return "SlidingLog" + Arrays.toString(copy);
  }
}

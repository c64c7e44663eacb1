package dev.ratelimit.memory;

import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import dev.ratelimit.spi.Mark;
import java.util.Arrays;

/**
 * SLIDING_LOG: one timestamp per accepted unit, oldest first, in a ring; the units in
 * {@code (t - W, t]} count. Twin of sliding_log.lua.
 *
 * <p>The ring grows by doubling up to the policy's limit and no further (a check consumes only
 * while the log holds at most {@code limit} units). Once a busy key's ring is full, the admission
 * that follows an expiry writes its timestamp into the slot the expired one left: the check reads
 * and writes one place of the array, not its two ends.
 */
final class SlidingLog extends State {
  private long[] log;
  private int head;
  private int size;
  /** The newest timestamp, {@code at(size - 1)} when {@code size > 0}: the tail's cache line not read again. */
  private long newest;
  /** The last in-order admission's decision (resetAfter = W), returned again while it is the answer. */
  private Decision last;

  SlidingLog() {
    clear();
  }

  @Override
  void clear() {
    log = new long[4];
    head = 0;
    size = 0;
    newest = 0;
    last = null;
  }

  @Override
  Decision check(Policy p, long t, long c, boolean consume, boolean detailed) {
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
        append(t, (int) c, limit);
        n += c;
      }
      long resetAfter = n > 0 ? newest + window - t : 0;
      if (consume) {
        expiresAt = t + resetAfter; // the newest entry + W
      }
      if (!detailed) {
        return ALLOWED;
      }
      if (resetAfter == window) { // the usual answer, the newest unit is now: the policy's own Duration
        Decision d = last;
        if (d == null || d.policy() != p || d.remaining() != limit - n) {
          d = Decision.allowed(p, limit - n, window, 0);
          if (consume) {
            last = d; // only a consuming check writes: a check that consumes nothing changes nothing
          }
        }
        return d; // a busy key in its steady state answers the same decision: none allocated
      }
      return Decision.allowed(p, limit - n, resetAfter, 0);
    }
    if (!detailed) {
      return DENIED;
    }
    long need = n + c - limit; // 1 <= need <= n because c <= limit
    long retryAfter = at(expired + (int) need - 1) + window - t;
    long resetAfter = newest + window - t;
    return Decision.denied(p, Math.max(0, limit - n), retryAfter, resetAfter);
  }

  /** Mark: the time the reservation's entries were logged at. */
  @Override
  Mark reserved(Policy p, long t, long ledgerId) {
    ledger = Ledger.open(ledger, ledgerId, t, t + p.windowMicros());
    return new Mark(t, 0, ledger.id);
  }

  /**
   * Removes up to {@code units} entries logged at the reservation's time while they are in the
   * window: entries of one time are alike, so these are the reservation's own or as good.
   */
  @Override
  void giveBack(Policy p, long t, long units, Mark mark) {
    long at = mark.at();
    if (Ledger.holds(ledger, mark, t) && at > t - p.windowMicros()) {
      int first = 0;
      while (first < size && at(first) < at) {
        first++;
      }
      int end = first;
      while (end < size && at(end) == at) {
        end++;
      }
      int removed = (int) Math.min(units, end - first);
      for (int i = end; i < size; i++) {
        log[slot(head + i - removed)] = log[slot(head + i)];
      }
      size -= removed;
      newest = size == 0 ? 0 : at(size - 1);
      last = null;
    }
    expiresAt = computeExpiresAt(p);
  }

  /**
   * Logs {@code units} entries at {@code t} whatever the limit, keeping the newest {@code limit}:
   * with the log full, the oldest entries decide nothing that the newest do not (a check passes
   * only once the log holds fewer than {@code limit}, and waits for the same entries to leave).
   */
  @Override
  void charge(Policy p, long t, long units) {
    long window = p.windowMicros();
    long limit = p.limit();
    int expired = 0;
    while (expired < size && at(expired) <= t - window) {
      expired++;
    }
    drop(expired);
    int added = (int) Math.min(units, limit);
    int over = size + added - (int) limit;
    if (over > 0) {
      drop(over);
    }
    append(t, added, limit);
    last = null;
    expiresAt = computeExpiresAt(p);
  }

  /** Snapshot: the timestamps of the units in the window, oldest first. */
  @Override
  void restore(long[] snapshot) {
    log = new long[Math.max(4, snapshot.length)];
    System.arraycopy(snapshot, 0, log, 0, snapshot.length);
    head = 0;
    size = snapshot.length;
    newest = size == 0 ? 0 : snapshot[size - 1];
  }

  @Override
  long computeExpiresAt(Policy p) {
    return size == 0 ? Long.MIN_VALUE : at(size - 1) + p.windowMicros();
  }

  /** The ring's length, for tests. */
  int capacity() {
    return log.length;
  }

  /** Whether the units run past the ring's end and on from its start, for tests. */
  boolean wrapped() {
    return head + size > log.length;
  }

  private long at(int i) {
    return log[slot(head + i)];
  }

  /** The ring's slot of position {@code i}, for {@code 0 <= i < 2 * log.length}. */
  private int slot(int i) {
    int length = log.length;
    return i < length ? i : i - length;
  }

  private void drop(int count) {
    head = slot(head + count);
    size -= count;
  }

  /** Appends {@code c} entries at {@code t}, keeping the log sorted if the clock stepped back. */
  private void append(long t, int c, long limit) {
    long[] log = this.log;
    if (c == 1 && size < log.length && (size == 0 || newest <= t)) { // the usual case: one unit, in order
      log[slot(head + size)] = t;
      size++;
      newest = t;
      return;
    }
    if (size + c > log.length) {
      int capacity = Math.max(size + c, (int) Math.min(2L * log.length, limit));
      long[] grown = new long[capacity];
      int first = Math.min(size, log.length - head); // the ring unrolled: head..end, then 0..
      System.arraycopy(log, head, grown, 0, first);
      System.arraycopy(log, 0, grown, first, size - first);
      this.log = grown;
      head = 0;
    }
    appendSorted(t, c);
    newest = at(size - 1);
  }

  private void appendSorted(long t, int c) {
    int insert = size;
    while (insert > 0 && at(insert - 1) > t) {
      insert--;
    }
    for (int i = size - 1; i >= insert; i--) {
      log[slot(head + i + c)] = log[slot(head + i)];
    }
    for (int i = 0; i < c; i++) {
      log[slot(head + insert + i)] = t;
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

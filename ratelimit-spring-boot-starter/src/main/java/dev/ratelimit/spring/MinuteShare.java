package dev.ratelimit.spring;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * The share of events that were hits over the last minute, in one-second slots on a nanosecond
 * clock: the slots of the 60 seconds up to now count. A slot is cleared when its second comes round
 * again; counts that race with the clearing may be lost, which a gauge can afford. Thread-safe.
 */
final class MinuteShare {
  private static final int SLOTS = 60;
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

  private final LongSupplier nanoTime;
  /** Each slot's second (nanoTime / 1 s), or Long.MIN_VALUE while unused. */
  private final AtomicLongArray seconds = new AtomicLongArray(SLOTS);
  private final LongAdder[] all = new LongAdder[SLOTS];
  private final LongAdder[] hits = new LongAdder[SLOTS];

  MinuteShare(LongSupplier nanoTime) {
    this.nanoTime = nanoTime;
    for (int i = 0; i < SLOTS; i++) {
      seconds.set(i, Long.MIN_VALUE);
      all[i] = new LongAdder();
      hits[i] = new LongAdder();
    }
  }

  /** Counts one event, a hit or not. */
  void record(boolean hit) {
    long second = Math.floorDiv(nanoTime.getAsLong(), SECOND);
    int slot = (int) Math.floorMod(second, SLOTS);
    long was = seconds.get(slot);
    if (was != second && seconds.compareAndSet(slot, was, second)) {
      all[slot].reset();
      hits[slot].reset();
    }
    all[slot].increment();
    if (hit) {
      hits[slot].increment();
    }
  }

  /** Hits over events in the last minute, in [0, 1]; 0 when there was none. */
  double share() {
    long now = Math.floorDiv(nanoTime.getAsLong(), SECOND);
    long a = 0;
    long h = 0;
    for (int i = 0; i < SLOTS; i++) {
      long second = seconds.get(i);
      if (second != Long.MIN_VALUE && now - second < SLOTS && now - second >= 0) {
        a += all[i].sum();
        h += hits[i].sum();
      }
    }
    return a == 0 ? 0.0 : Math.min(1.0, (double) h / a);
  }
}

package dev.ratelimit;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Times out the limiter's asynchronous calls at their deadlines, cheaply: the calls whose
 * deadlines fall in the same millisecond share one slot and one timer task (on the JDK's shared
 * delayer, as {@link CompletableFuture#orTimeout} uses), where {@code orTimeout} schedules and
 * cancels a task per call, each a locked insertion into and removal from the timer's queue (a
 * tenth of the client's CPU per Redis check at 64 in flight). A call is timed out at the earliest
 * at its deadline and, besides the timer's own delay, at most two slots (2 ms) later: a deadline
 * computed a little before the latest slot's joins that slot. A call that completed first is only
 * dropped from its slot when the slot fires, so a limiter holds about (calls per second × timeout)
 * finished futures: 25,000 at 100,000 checks/s and the default 250 ms.
 */
final class Deadlines {
  /** The width of a slot, ns. */
  static final long SLOT_NANOS = 1_000_000;

  /** The slot with the latest end so far. */
  private final AtomicReference<Slot> latest = new AtomicReference<>();

  /**
   * Completes {@code future} exceptionally with a {@link TimeoutException} if it is not done by
   * {@code deadlineNanos} ({@link System#nanoTime}), give or take a slot.
   */
  void add(CompletableFuture<?> future, long deadlineNanos) {
    long end = deadlineNanos - Math.floorMod(deadlineNanos, SLOT_NANOS) + SLOT_NANOS;
    for (;;) {
      Slot slot = latest.get();
      long later = slot == null ? -1 : slot.end - end;
      if (later >= 0 && later <= SLOT_NANOS && slot.add(future)) {
        return; // its slot, or for a deadline computed a little earlier by another thread, the next
      }
      Slot fresh = new Slot(end);
      fresh.add(future);
      if (later >= 0) { // earlier than the latest slot, whose end is too far or which has fired
        fresh.schedule();
        return;
      }
      if (latest.compareAndSet(slot, fresh)) {
        fresh.schedule();
        return;
      }
    }
  }

  /** The calls due by {@code end}, and the one timer task that times them out. */
  private static final class Slot implements Runnable {
    final long end;
    private List<CompletableFuture<?>> futures = new ArrayList<>();

    Slot(long end) {
      this.end = end;
    }

    /** Adds {@code future}; false when the slot has already fired. */
    synchronized boolean add(CompletableFuture<?> future) {
      if (futures == null) {
        return false;
      }
      futures.add(future);
      return true;
    }

    void schedule() {
      CompletableFuture.delayedExecutor(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS, Runnable::run)
          .execute(this);
    }

    @Override
    public void run() {
      List<CompletableFuture<?>> due;
      synchronized (this) {
        due = futures;
        futures = null;
      }
      TimeoutException timeout = null;
      for (CompletableFuture<?> future : due) {
        if (!future.isDone()) {
          timeout = timeout != null ? timeout : new TimeoutException();
          future.completeExceptionally(timeout);
        }
      }
    }
  }
}

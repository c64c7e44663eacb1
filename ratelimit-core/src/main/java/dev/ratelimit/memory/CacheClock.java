package dev.ratelimit.memory;

import com.github.benmanes.caffeine.cache.Expiry;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The limiter's clock as the in-memory backend's caches see it: the latest {@code now} of a check,
 * in nanoseconds, moved forward by at least {@link #TICK_NANOS} by a check (so that a check rarely
 * writes it) and exactly by the other operations; never backwards.
 */
final class CacheClock {
  /** How far the clock moves before the cache's view of it is updated by a check, ns. */
  static final long TICK_NANOS = 100_000_000L;
  private static final VarHandle LATEST;

  static {
    try {
      LATEST = MethodHandles.lookup().findVarHandle(CacheClock.class, "latest", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private volatile long latest = Long.MIN_VALUE;

  /** The clock now, ns; {@link Long#MIN_VALUE} before the first operation. */
  long latestNanos() {
    return latest;
  }

  /**
   * How far {@code nowMicros} is behind the cache's clock, µs, at least 0: a slow thread's now, or a
   * clock stepped back (the cache's clock never goes back).
   */
  long lag(long nowMicros) {
    long latest = this.latest;
    long nanos = nanos(nowMicros);
    return latest > nanos ? (latest - nanos) / 1_000L : 0;
  }

  /**
   * Moves the cache's clock forward when {@code nowMicros} is at least 100 ms past it (rare
   * writes); answers {@link #lag} as the clock was read.
   */
  long observe(long nowMicros) {
    long nanos = nanos(nowMicros);
    long seen = this.latest;
    if (nanos - TICK_NANOS > seen) {
      advance(nanos, seen);
      return 0;
    }
    return seen > nanos ? (seen - nanos) / 1_000L : 0;
  }

  /** Moves the cache's clock forward to exactly {@code nowMicros} when it is later. */
  void observeExactly(long nowMicros) {
    advance(nanos(nowMicros), this.latest);
  }

  private void advance(long nanos, long seen) {
    while (nanos > seen && !LATEST.weakCompareAndSet(this, seen, nanos)) {
      seen = this.latest;
    }
  }

  static long nanos(long micros) {
    return micros >= Long.MAX_VALUE / 1_000L ? Long.MAX_VALUE - TICK_NANOS
        : micros <= Long.MIN_VALUE / 1_000L ? Long.MIN_VALUE + TICK_NANOS : micros * 1_000L;
  }

  /** Nanoseconds from {@code currentNanos} until {@code holdMicros}, at least 0, saturated. */
  static long nanosUntil(long holdMicros, long currentNanos) {
    if (holdMicros >= Long.MAX_VALUE / 1_000L) {
      return Long.MAX_VALUE; // beyond the year 2262: Caffeine caps it
    }
    if (holdMicros <= Long.MIN_VALUE / 1_000L) {
      return 0;
    }
    long holdNanos = holdMicros * 1_000L;
    long until = holdNanos - currentNanos;
    if (((holdNanos ^ currentNanos) & (holdNanos ^ until)) < 0) {
      return holdNanos > currentNanos ? Long.MAX_VALUE : 0; // overflowed
    }
    return Math.max(0, until);
  }

    /** Each entry lives until its hold; reads do not move it. */
    static final class UntilHold implements Expiry<String, State> {
      @Override
      public long expireAfterCreate(String key, State entry, long currentTime) {
        return nanosUntil(entry.hold, currentTime);
      }

      @Override
      public long expireAfterUpdate(String key, State entry, long currentTime, long currentDuration) {
        return nanosUntil(entry.hold, currentTime);
      }

      @Override
      public long expireAfterRead(String key, State entry, long currentTime, long currentDuration) {
        return currentDuration;
      }
    }
}

package dev.ratelimit;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;

/**
 * A clock that moves only when told to: tests set it exactly instead of sleeping. Thread-safe and
 * lock-free; reading it allocates nothing on the limiter's path.
 *
 * <p>It holds nanoseconds since the epoch in a {@code long}, so it covers the years 1677 to 2262;
 * setting it outside that range is refused with an {@link IllegalArgumentException}.
 *
 * <pre>{@code
 * ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000));
 * RateLimiter limiter = RateLimiter.builder().clock(clock).build();
 * clock.advance(Duration.ofSeconds(60));
 * }</pre>
 */
public final class ManualClock implements InstantSource {
  private static final VarHandle NANOS;

  static {
    try {
      NANOS = MethodHandles.lookup().findVarHandle(ManualClock.class, "nanos", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** Nanoseconds since the epoch. */
  private volatile long nanos;

  private ManualClock(long nanos) {
    this.nanos = nanos;
  }

  /** A clock standing at {@code instant}. */
  public static ManualClock at(Instant instant) {
    return new ManualClock(epochNanos(instant));
  }

  /** A clock standing at {@code epochMicros} microseconds since the epoch. */
  public static ManualClock atEpochMicros(long epochMicros) {
    try {
      return new ManualClock(Math.multiplyExact(epochMicros, 1_000L));
    } catch (ArithmeticException e) {
      throw outOfRange("epochMicros " + epochMicros, e);
    }
  }

  /** Moves the clock to {@code instant} (backwards too). */
  public void set(Instant instant) {
    nanos = epochNanos(instant);
  }

  /** Moves the clock forward by {@code duration} (a negative duration moves it back). */
  public void advance(Duration duration) {
    Objects.requireNonNull(duration, "duration");
    try {
      advanceNanos(duration.toNanos());
    } catch (ArithmeticException e) {
      throw outOfRange("advancing " + instant() + " by " + duration, e);
    }
  }

  /** Moves the clock forward by {@code micros} microseconds. */
  public void advanceMicros(long micros) {
    try {
      advanceNanos(Math.multiplyExact(micros, 1_000L));
    } catch (ArithmeticException e) {
      throw outOfRange("advancing " + instant() + " by " + micros + " µs", e);
    }
  }

  private void advanceNanos(long delta) {
    long seen;
    do {
      seen = nanos;
    } while (!NANOS.weakCompareAndSet(this, seen, Math.addExact(seen, delta)));
  }

  private static IllegalArgumentException outOfRange(String what, ArithmeticException cause) {
    return new IllegalArgumentException("a ManualClock covers the years 1677 to 2262: " + what
        + " leaves that range", cause);
  }

  @Override
  public Instant instant() {
    long n = nanos;
    return Instant.ofEpochSecond(Math.floorDiv(n, 1_000_000_000L), Math.floorMod(n, 1_000_000_000L));
  }

  @Override
  public long millis() {
    return Math.floorDiv(nanos, 1_000_000L);
  }

  /** Microseconds since the epoch, floored: what the limiter reads, without an {@link Instant}. */
  public long epochMicros() {
    return Math.floorDiv(nanos, 1_000L);
  }

  @Override
  public String toString() {
    return "ManualClock[" + instant() + "]";
  }

  private static long epochNanos(Instant instant) {
    Objects.requireNonNull(instant, "instant");
    try {
      return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000_000L), instant.getNano());
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException("a ManualClock covers the years 1677 to 2262, was " + instant, e);
    }
  }
}

package dev.ratelimit;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Objects;

/**
 * A clock that moves only when told to: tests set it exactly instead of sleeping. Thread-safe.
 *
 * <pre>{@code
 * ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000));
 * RateLimiter limiter = RateLimiter.builder().clock(clock).build();
 * clock.advance(Duration.ofSeconds(60));
 * }</pre>
 */
public final class ManualClock implements InstantSource {
  private volatile Instant now;

  private ManualClock(Instant now) {
    this.now = Objects.requireNonNull(now, "now");
  }

  /** A clock standing at {@code instant}. */
  public static ManualClock at(Instant instant) {
    return new ManualClock(instant);
  }

  /** A clock standing at {@code epochMicros} microseconds since the epoch. */
  public static ManualClock atEpochMicros(long epochMicros) {
    return new ManualClock(Instant.EPOCH.plusNanos(Math.multiplyExact(epochMicros, 1_000L)));
  }

  /** Moves the clock to {@code instant} (backwards too). */
  public void set(Instant instant) {
    now = Objects.requireNonNull(instant, "instant");
  }

  /** Moves the clock forward by {@code duration} (a negative duration moves it back). */
  public synchronized void advance(Duration duration) {
    now = now.plus(Objects.requireNonNull(duration, "duration"));
  }

  /** Moves the clock forward by {@code micros} microseconds. */
  public void advanceMicros(long micros) {
    advance(Duration.ofNanos(Math.multiplyExact(micros, 1_000L)));
  }

  @Override
  public Instant instant() {
    return now;
  }

  @Override
  public String toString() {
    return "ManualClock[" + now + "]";
  }
}

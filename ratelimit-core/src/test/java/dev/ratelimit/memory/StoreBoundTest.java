package dev.ratelimit.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.LogCapture;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The in-memory bound must never cost a limit. With {@code maximumKeys(1000)}, a few thousand one-off
 * keys evicted a login key that was locked out for 15 minutes (its next check was allowed with a
 * fresh quota) and took a daily counter back to its full limit: an attacker rotating keys lifted
 * every lockout. Keys checked once are now the first to go; a key checked again, or whose first
 * check took its whole capacity, is kept while it matters, whatever number of one-off keys follow.
 */
class StoreBoundTest {
  private static final Instant T = Instant.ofEpochSecond(1_700_000_000L);

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void fiftyThousandOneOffKeysLiftNoLockoutAndResetNoCount(Algorithm algorithm) {
    ManualClock clock = ManualClock.at(T);
    InMemoryBackend backend = InMemoryBackend.builder().maximumKeys(1_000).build();
    Policy login = Policy.of(5, Duration.ofMinutes(15), algorithm).withName("login");
    Policy daily = Policy.of(5_000, Duration.ofDays(1), algorithm == Algorithm.SLIDING_LOG
        ? Algorithm.FIXED_WINDOW : algorithm).withName("daily"); // a daily log of 5,000 is not what a log is for
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(backend).build()) {
      for (int i = 0; i < 5; i++) {
        assertThat(limiter.check("victim", login).allowed()).isTrue();
      }
      Decision lockedOut = limiter.check("victim", login);
      assertThat(lockedOut.allowed()).isFalse();
      for (int i = 0; i < 3; i++) {
        limiter.check("counted", daily);
      }
      for (int i = 0; i < 50_000; i++) {
        limiter.check("one-off-" + i, i % 2 == 0 ? login : daily);
        clock.advanceMicros(1);
      }
      assertThat(backend.size()).as("the bound holds").isLessThanOrEqualTo(1_000);
      Decision stillLockedOut = limiter.check("victim", login);
      assertThat(stillLockedOut.allowed()).as("the lockout outlived the flood").isFalse();
      assertThat(stillLockedOut.retryAfter()).isEqualTo(lockedOut.retryAfter().minusNanos(50_000_000));
      assertThat(limiter.check("counted", daily).remaining()).as("the count outlived the flood").isEqualTo(4_996);
      assertThat(backend.keysNotHeld()).as("one-off keys made room for each other").isZero();
    }
  }

  /**
   * A first check that takes a key's whole capacity (one code per phone per 10 minutes) keeps the
   * key at once; when such keys fill the bound, a further new key is not kept, and none of those
   * held is evicted to make room. The same through checkAll, which the filter and the aspect send.
   */
  @Test
  void keysLockedOutByTheirFirstCheckAreKeptAndNoneIsEvicted() {
    ManualClock clock = ManualClock.at(T);
    InMemoryBackend backend = InMemoryBackend.builder().maximumKeys(100).build();
    Policy p = Policy.of(1, Duration.ofMinutes(10));
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(backend).build()) {
      for (int i = 0; i < 150; i++) {
        assertThat(i % 2 == 0 ? limiter.check("phone-" + i, p).allowed()
            : limiter.checkAll("phone-" + i, java.util.List.of(p), 1).allowed()).isTrue();
      }
      assertThat(backend.keysNotHeld()).as("past the bound, not kept").isEqualTo(50);
      for (int i = 0; i < 100; i++) {
        assertThat(limiter.check("phone-" + i, p).allowed()).as("phone-%d still locked out", i).isFalse();
      }
      for (int i = 0; i < 5_000; i++) {
        limiter.checkAll("one-off-" + i, java.util.List.of(Policy.of(5, Duration.ofMinutes(10))), 1);
      }
      assertThat(limiter.checkAll("phone-1", java.util.List.of(p), 1).allowed()).as("a flood lifts nothing").isFalse();
      assertThat(backend.size()).isLessThanOrEqualTo(100);
    }
  }

  /**
   * When the states that still matter fill the bound, the documented choice: a new key is decided as
   * a fresh key and not kept (counted in keysNotHeld), and every kept limit stands.
   */
  @Test
  void whenLiveStatesFillTheBoundNewKeysAreNotKeptAndNoLimitIsLifted() {
    ManualClock clock = ManualClock.at(T);
    InMemoryBackend backend = InMemoryBackend.builder().maximumKeys(100).build();
    Policy p = Policy.of(2, Duration.ofHours(1));
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(backend).build()) {
      for (int i = 0; i < 100; i++) {
        limiter.check("user-" + i, p);
        limiter.check("user-" + i, p); // checked again: kept
      }
      assertThat(backend.keysNotHeld()).isZero();
      for (int i = 0; i < 10; i++) {
        assertThat(limiter.check("newcomer", p).allowed()).as("decided as a fresh key").isTrue();
      }
      assertThat(backend.keysNotHeld()).isEqualTo(10);
      for (int i = 0; i < 100; i++) {
        assertThat(limiter.check("user-" + i, p).allowed()).as("user-%d still limited", i).isFalse();
      }
      clock.advance(Duration.ofHours(2)); // every state stops mattering: room again
      limiter.check("newcomer", p);
      limiter.check("newcomer", p);
      assertThat(limiter.check("newcomer", p).allowed()).as("kept again").isFalse();
    }
  }

  /**
   * The full store's warning goes through the one log throttle, as every other warning does: one
   * line a minute, the next one saying how many it left out. It used to keep its own once-a-minute
   * timer, whose lines never said what was left out.
   */
  @Test
  void theFullStoreWarningIsThrottledByTheSharedLogThrottle() {
    ManualClock clock = ManualClock.at(T);
    AtomicLong nanos = new AtomicLong(-7); // the throttle's own clock, any start
    InMemoryBackend backend = InMemoryBackend.builder().maximumKeys(1).nanoTime(nanos::get).build();
    Policy p = Policy.of(1, Duration.ofHours(1));
    String first = "the in-memory rate limiter holds 1 states that still matter (maximumKeys): checks of new keys"
        + " are decided as fresh keys and not kept until states expire; 1 so far. Raise maximumKeys."
        + " (logged at most once a minute)";
    String later = "the in-memory rate limiter holds 1 states that still matter (maximumKeys): checks of new keys"
        + " are decided as fresh keys and not kept until states expire; 4 so far. Raise maximumKeys."
        + " (2 more since the last line) (logged at most once a minute)";
    try (LogCapture log = new LogCapture(InMemoryBackend.class);
        RateLimiter limiter = RateLimiter.builder().clock(clock).backend(backend).build()) {
      limiter.check("kept", p); // takes its whole capacity: kept, and the store is full
      limiter.check("new-1", p);
      assertThat(log.lines(Level.WARNING)).containsExactly(first);
      limiter.check("new-2", p);
      nanos.addAndGet(Duration.ofMinutes(1).toNanos() - 1);
      limiter.checkAll("new-3", java.util.List.of(p), 1);
      assertThat(log.lines(Level.WARNING)).as("within the minute, left out").containsExactly(first);
      nanos.incrementAndGet();
      limiter.check("new-4", p);
      assertThat(log.lines(Level.WARNING)).containsExactly(first, later);
      assertThat(backend.keysNotHeld()).isEqualTo(4);
    }
  }

  /**
   * Eight threads each move 500 keys to the kept segment at once (a burst of new users, each
   * checked twice): the bound's adjustment runs on one thread at a time without making the others
   * wait, and once the burst is over the bound holds, every key is kept, and none lost its count.
   */
  @Test
  void aBurstOfPromotionsOnManyThreadsKeepsTheBoundAndEveryCount() throws Exception {
    ManualClock clock = ManualClock.at(T);
    InMemoryBackend backend = InMemoryBackend.builder().maximumKeys(5_000).build();
    Policy p = Policy.of(3, Duration.ofHours(1));
    int threads = 8;
    int perThread = 500;
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(backend).build()) {
      java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(threads);
      java.util.List<java.util.concurrent.Future<?>> done = new java.util.ArrayList<>();
      java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(threads);
      try {
        for (int t = 0; t < threads; t++) {
          int thread = t;
          done.add(pool.submit(() -> {
            start.await();
            for (int i = 0; i < perThread; i++) {
              String key = "user-" + thread + "-" + i;
              limiter.check(key, p);
              limiter.checkAll(key, java.util.List.of(p), 1); // the second check promotes
            }
            return null;
          }));
        }
        for (java.util.concurrent.Future<?> f : done) {
          f.get(60, java.util.concurrent.TimeUnit.SECONDS);
        }
      } finally {
        pool.shutdownNow();
      }
      assertThat(backend.keysNotHeld()).as("4,000 keys fit in 5,000").isZero();
      assertThat(backend.size()).isEqualTo(threads * perThread);
      for (int t = 0; t < threads; t++) {
        for (int i = 0; i < perThread; i++) {
          assertThat(limiter.check("user-" + t + "-" + i, p).remaining()).as("user-%d-%d", t, i).isZero();
        }
      }
      for (int i = 0; i < 20_000; i++) {
        limiter.check("one-off-" + i, p); // probation's bound is what the 4,000 kept leave
      }
      assertThat(backend.size()).as("the bound holds").isLessThanOrEqualTo(5_000);
      assertThat(limiter.check("user-7-499", p).allowed()).as("kept through the flood").isFalse();
    }
  }
}

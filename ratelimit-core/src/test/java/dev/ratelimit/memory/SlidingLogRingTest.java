package dev.ratelimit.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * SLIDING_LOG's ring (sized up to the limit, not a power of two, so that a full ring's admission
 * reuses the slot its expiry freed) against the plainest log there is: a sorted list of
 * timestamps. Random traces of costs, consuming and inspecting checks, and late checks (the clock
 * stepping back), long enough for the ring to fill and wrap around; and, with the policy's limit
 * changing under one name and states restored from snapshots, for it to grow from a wrapped ring.
 */
class SlidingLogRingTest {
  private static final long START = 1_700_000_000_000_000L;

  @ParameterizedTest
  @ValueSource(ints = {1, 3, 4, 5, 7, 100})
  void answersAsASortedListOfTimestamps(int limit) {
    Policy p = Policy.of(limit, Duration.ofSeconds(2)).withAlgorithm(Algorithm.SLIDING_LOG);
    long window = p.windowMicros();
    SplittableRandom random = new SplittableRandom(limit);
    SlidingLog ring = new SlidingLog();
    List<Long> model = new ArrayList<>();
    long t = START;
    for (int i = 0; i < 20_000; i++) {
      t += random.nextInt(10) == 0 ? -random.nextLong(0, 300_000) : random.nextLong(0, 3 * window / limit);
      long cost = 1 + random.nextLong(Math.min(3, limit));
      boolean consume = random.nextInt(5) != 0;
      Decision expected = modelCheck(model, p, t, cost, consume);
      assertThat(State.check(ring, p, t, cost, consume)).as("check %d at %d, cost %d", i, t, cost)
          .isEqualTo(expected);
      assertThat(ring.capacity()).as("the ring never grows past the limit").isLessThanOrEqualTo(Math.max(4, limit));
      if (!model.isEmpty()) {
        assertThat(State.computeExpiresAt(ring, p)).isEqualTo(model.get(model.size() - 1) + window);
      }
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3})
  void growsFromAWrappedRingWhenTheLimitRises(int seed) {
    long[] limits = {3, 5, 8, 13, 21};
    SplittableRandom random = new SplittableRandom(seed);
    SlidingLog ring = new SlidingLog();
    List<Long> model = new ArrayList<>();
    long t = START;
    long largest = 0;
    int grownWrapped = 0;
    for (int i = 0; i < 20_000; i++) {
      long limit = limits[random.nextInt(limits.length)];
      largest = Math.max(largest, limit);
      Policy p = Policy.of(limit, Duration.ofSeconds(2), Algorithm.SLIDING_LOG).withName("uploads");
      long window = p.windowMicros();
      if (random.nextInt(50) == 0) { // a snapshot restored, as the near-cache does: the units in the window
        long now = t;
        model.removeIf(ts -> ts <= now - window);
        ring = new SlidingLog();
        ring.restore(model.stream().mapToLong(Long::longValue).toArray());
      }
      t += random.nextInt(10) == 0 ? -random.nextLong(0, 200_000) : random.nextLong(0, 3 * window / limit);
      long cost = 1 + random.nextLong(Math.min(3, limit));
      boolean consume = random.nextInt(5) != 0;
      int capacity = ring.capacity();
      boolean wrapped = ring.wrapped();
      Decision expected = modelCheck(model, p, t, cost, consume);
      assertThat(State.check(ring, p, t, cost, consume)).as("check %d at %d, cost %d, limit %d", i, t, cost, limit)
          .isEqualTo(expected);
      grownWrapped += wrapped && ring.capacity() > capacity ? 1 : 0;
      assertThat(ring.capacity()).as("the ring never grows past the largest limit").isLessThanOrEqualTo(Math.max(4, (int) largest));
    }
    assertThat(grownWrapped).as("growths of a wrapped ring").isGreaterThan(10);
  }

  private static Decision modelCheck(List<Long> log, Policy p, long t, long c, boolean consume) {
    long window = p.windowMicros();
    long limit = p.limit();
    List<Long> live = log.stream().filter(ts -> ts > t - window).toList();
    long n = live.size();
    if (n + c <= limit) {
      if (consume) {
        log.removeIf(ts -> ts <= t - window);
        for (int i = 0; i < c; i++) {
          log.add(t);
        }
        Collections.sort(log);
        n += c;
      }
      long resetAfter = n > 0 ? log.get(log.size() - 1) + window - t : 0;
      return Decision.allowed(p, limit - n, resetAfter, 0);
    }
    long need = n + c - limit;
    return Decision.denied(p, Math.max(0, limit - n), live.get((int) need - 1) + window - t,
        log.get(log.size() - 1) + window - t);
  }
}

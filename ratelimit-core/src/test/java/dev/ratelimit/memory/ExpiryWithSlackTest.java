package dev.ratelimit.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The in-memory backend tells its cache a key's expiry with slack (see {@link Entry}): an idle key
 * is dropped once its states have stopped mattering for one slack, and a key is never dropped while
 * a state still matters, however the clock jumps around the deadlines and holds.
 */
class ExpiryWithSlackTest {
  private static final long T0 = 1_700_000_000_000_000L;
  private static final long TICK_MICROS = InMemoryBackend.TICK_NANOS / 1_000;

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void anIdleKeyIsDroppedOneSlackAfterItStopsMattering(Algorithm algorithm) {
    Policy p = Policy.of(10, Duration.ofSeconds(10), algorithm);
    Policy probe = Policy.of(10, Duration.ofSeconds(10)).withName("probe");
    InMemoryBackend backend = InMemoryBackend.create();
    long resetAfter = backend.check("k", p, 3, T0).resetAfter().toNanos() / 1_000;
    long slack = p.windowMicros(); // between Entry.MIN_SLACK_MICROS and MAX_SLACK_MICROS here
    long stopsMattering = T0 + resetAfter;

    backend.inspect("probe", probe, stopsMattering);
    assertThat(backend.size()).as("the state no longer matters").isZero();
    assertThat(backend.heldKeys()).as("but the key is held for its slack").isEqualTo(1);

    backend.inspect("probe", probe, stopsMattering + slack - 1);
    assertThat(backend.heldKeys()).as("1 µs before the slack runs out").isEqualTo(1);

    backend.check("other", probe, 1, stopsMattering + slack + TICK_MICROS + 1);
    assertThat(backend.heldKeys()).as("dropped: only the other key is left").isEqualTo(1);
    assertThat(backend.inspect("k", p, stopsMattering + slack + TICK_MICROS + 1).remaining())
        .as("and it is fresh").isEqualTo(10);
  }

  /**
   * A key in use moves its expiry in the cache only when its deadline comes within the margin (an
   * eighth of the slack here) of its hold: 200 GCRA checks at 100 per 60 s, one every 0.5 s, move
   * the deadline 0.6 s each (120 s in all) from a first hold 60 s past the first deadline, so the
   * cache is told twice, at checks 88 and 176 (with half a slack as the margin it was told 3 times).
   */
  @Test
  void aKeyInUseMovesItsExpiryOncePerSevenEighthsOfItsSlack() {
    Policy p = Policy.of(100, Duration.ofSeconds(60));
    InMemoryBackend backend = InMemoryBackend.create();
    List<Integer> renewedAt = new ArrayList<>();
    int[] check = {0};
    backend.renewalHook = oldHold -> renewedAt.add(check[0]);
    for (; check[0] < 200; check[0]++) {
      assertThat(backend.check("k", p, 1, T0 + check[0] * 500_000L).allowed()).as("check %d", check[0]).isTrue();
    }
    assertThat(renewedAt).containsExactly(88, 176);
    assertThat(Entry.margin(p.windowMicros())).isEqualTo(7_500_000);
    assertThat(Entry.margin(Entry.MIN_SLACK_MICROS)).as("at least half a second").isEqualTo(500_000);
  }

  /**
   * A key with an hour's policy and a second's: the short policy's checks push the deadline past
   * the long one's renewal point but stay well inside the hour's hold, which therefore never moves
   * back (each renewal's old hold is later than the one before), and the cache is told nothing
   * until the deadline comes within the short policy's margin of that hold (before, the first
   * renewal moved the hold back to the deadline plus a second).
   */
  @Test
  void aShorterWindowNeverMovesAKeysExpiryBack() {
    Policy hour = Policy.of(10, Duration.ofHours(1)).withName("hour");
    Policy second = Policy.of(1_000, Duration.ofSeconds(1)).withName("second");
    InMemoryBackend backend = InMemoryBackend.create();
    List<Long> oldHolds = new ArrayList<>();
    backend.renewalHook = oldHolds::add;
    assertThat(backend.check("k", hour, 1, T0).allowed()).isTrue(); // hold: T0 + 6 min + 1 h
    long t = T0 + 3_600_000_000L + 6 * 60_000_000L - 8 * 60_000_000L; // 8 min before that hold
    for (int i = 0; i < 400; i++, t += 10_000) {
      assertThat(backend.check("k", second, 1, t).allowed()).isTrue();
    }
    long hourHold = T0 + 3_960_000_000L;
    assertThat(oldHolds).as("told once: the second policy's state added, the hold unchanged")
        .containsExactly(hourHold);
    for (int i = 0; i < 6_000; i++, t += 100_000) { // on to the hold and 2 minutes past it
      assertThat(backend.check("k", second, 1, t).allowed()).isTrue();
    }
    assertThat(oldHolds).as("renewed near the hour's hold, then every half second or so")
        .hasSizeGreaterThan(200).isSorted();
    assertThat(oldHolds.get(1)).as("the first renewal found the hour's hold").isEqualTo(hourHold);
  }

  /**
   * Random checks, inspections and clock jumps (many of them to just before, at and after a key's
   * deadline and hold), with a flood of other keys that keeps the cache's maintenance running:
   * every decision equals that of the bare algorithm on a state that is never dropped.
   */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void aKeyIsNeverDroppedWhileItMatters(Algorithm algorithm) {
    List<Policy> policies = List.of(
        Policy.of(5, Duration.ofSeconds(2), algorithm).withName("a"),
        Policy.of(3, Duration.ofMillis(1_500), algorithm).withName("b"),
        Policy.of(4, Duration.ofSeconds(16), algorithm).withName("c")); // margin 2 s, not the least 0.5 s
    InMemoryBackend backend = InMemoryBackend.create();
    Map<String, State> model = new HashMap<>();
    SplittableRandom random = new SplittableRandom(7);
    long now = T0;
    for (int i = 0; i < 20_000; i++) {
      String key = "k" + random.nextInt(4);
      Policy p = policies.get(random.nextInt(policies.size()));
      long cost = 1 + random.nextInt((int) p.capacity());
      State state = model.computeIfAbsent(key + "/" + p.name(), k -> State.fresh(p));
      if (random.nextInt(5) == 0) {
        assertThat(backend.inspect(key, p, now))
            .as("inspect #%d", i).isEqualTo(State.check(state, p, now, 1, false));
      } else {
        Decision expected = State.check(state, p, now, cost, true);
        assertThat(backend.check(key, p, cost, now)).as("check #%d", i).isEqualTo(expected);
      }
      backend.check("flood-" + i, p, 1, now);
      now += switch (random.nextInt(6)) {
        case 0 -> 0;
        case 1 -> random.nextLong(1, 1_000);
        case 2 -> random.nextLong(1, 2 * p.windowMicros());
        case 3 -> p.windowMicros() + Entry.MIN_SLACK_MICROS + TICK_MICROS - random.nextLong(0, 3);
        case 4 -> 2 * p.windowMicros() + Entry.MIN_SLACK_MICROS + random.nextLong(-2, 3);
        default -> random.nextLong(1, 100_000);
      };
    }
  }
}

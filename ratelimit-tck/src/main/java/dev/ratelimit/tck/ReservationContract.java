package dev.ratelimit.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.KeyedPolicy;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.Reservation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The reservation contract (ARCHITECTURE §3 and §4), for a backend that {@linkplain
 * dev.ratelimit.spi.Backend#reserves reserves}: a reserve decided as a check of its estimate, a
 * refused one holding nothing, settles once, charges beyond the limit, and give-backs that leave
 * the limiter admitting no more than if the units had never been taken, and exactly as much when
 * nothing happened in between. Each comparison runs a key beside a twin key that never reserved.
 */
public abstract class ReservationContract extends ContractSupport {

  /** A policy of {@code algorithm} whose emission interval is not a whole number of µs. */
  static Policy uneven(Algorithm algorithm) {
    Policy p = Policy.of(7, Duration.ofSeconds(10)).withAlgorithm(algorithm);
    return algorithm.usesBurst() ? p.withBurst(5) : p;
  }

  /** Every cost's verdict on {@code key} now, and the cost-1 decision: what the state admits. */
  List<Object> admits(String key, Policy p) {
    List<Object> seen = new ArrayList<>();
    for (long c = 1; c <= p.capacity(); c++) {
      MultiDecision d = limiter.peekAll(key, List.of(p), c);
      seen.add(c + ":" + d.allowed() + ":" + d.decisions().get(0).retryAfterMicros());
    }
    Decision one = limiter.inspect(key, p);
    seen.add(one.remaining() + "/" + one.resetAfterMicros());
    return seen;
  }

  /** Asserts that whatever {@code key} admits now (each cost), {@code twin} admits too. */
  void assertAdmitsNoMore(String key, String twin, Policy p, String as) {
    for (long c = 1; c <= p.capacity(); c++) {
      boolean with = limiter.peekAll(key, List.of(p), c).allowed();
      boolean without = limiter.peekAll(twin, List.of(p), c).allowed();
      assertThat(!with || without).as("%s: cost %d admitted with the give-back but not without it", as, c).isTrue();
    }
  }

  // ---------------------------------------------------------------- reserving

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void aReserveIsDecidedAsACheckOfItsEstimate(Algorithm algorithm) {
    Policy p = uneven(algorithm);
    String k = key("reserve");
    String twin = key("check");
    long[] costs = {2, 2, 1, 3, 1, 1};
    for (long c : costs) {
      Reservation r = limiter.reserve(k, p, c);
      Decision d = limiter.check(twin, p, c);
      assertThat(r.decision()).as("cost %d", c).isEqualTo(d);
      assertThat(r.allowed()).isEqualTo(d.allowed());
      advanceMicros(400_000);
    }
    assertThat(admits(k, p)).isEqualTo(admits(twin, p));
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void aRefusedReservationHoldsNothingAndCannotBeSettled(Algorithm algorithm) {
    Policy p = uneven(algorithm);
    String k = key("refused");
    limiter.check(k, p, p.capacity());
    List<Object> before = admits(k, p);
    Reservation r = limiter.reserve(k, p, 1);
    assertThat(r.allowed()).isFalse();
    assertThat(r.decision().retryAfterMicros()).isPositive();
    assertThatThrownBy(r::cancel).isInstanceOf(IllegalStateException.class).hasMessageContaining("refused");
    assertThatThrownBy(() -> r.commit(1)).isInstanceOf(IllegalStateException.class).hasMessageContaining("refused");
    assertThat(admits(k, p)).isEqualTo(before);
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void severalPoliciesAreReservedAllOrNothing(Algorithm algorithm) {
    Policy roomy = uneven(algorithm).withName("roomy");
    Policy tight = Policy.of(2, Duration.ofSeconds(10)).withAlgorithm(algorithm).withName("tight");
    String k = key("multi");
    Reservation first = limiter.reserve(k, List.of(roomy, tight), 2);
    assertThat(first.allowed()).isTrue();
    List<Object> before = admits(k, roomy);
    Reservation second = limiter.reserve(k, List.of(roomy, tight), 1);
    assertThat(second.allowed()).isFalse();
    assertThat(second.decision().policy()).isEqualTo(tight);
    assertThat(admits(k, roomy)).as("the roomy policy took nothing").isEqualTo(before);
    first.cancel();
    assertThat(limiter.reserve(k, List.of(roomy, tight), 2).allowed()).isTrue();
  }

  // ---------------------------------------------------------------- across keys

  /** Pairs of different keys: reserved all or nothing, settled on each key by its own policy. */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void pairsOfDifferentKeysAreReservedAllOrNothingAndSettledOnEach(Algorithm algorithm) throws Exception {
    List<String> keys = checkedTogether(List.of(key("user"), key("tenant")));
    String user = keys.get(0);
    String tenant = keys.get(1);
    Policy roomy = uneven(algorithm).withName("roomy");
    Policy tight = Policy.of(3, Duration.ofSeconds(10)).withAlgorithm(algorithm).withName("tight");
    List<KeyedPolicy> pairs = List.of(KeyedPolicy.of(user, roomy), KeyedPolicy.of(tenant, tight));
    String twin = key("twin");
    Reservation first = limiter.reserve(pairs, 2);
    Reservation twinFirst = limiter.reserve(twin, roomy, 2);
    assertThat(first.allowed()).isTrue();
    assertThat(first.keyedPolicies()).isEqualTo(pairs);
    assertThat(first.key()).isEqualTo(user);
    assertThat(first.decisions().decisions()).extracting(Decision::remaining)
        .containsExactly(twinFirst.decision().remaining(), 1L);
    List<Object> userBefore = admits(user, roomy);
    List<Object> tenantBefore = admits(tenant, tight);
    Reservation refused = limiter.reserve(pairs, 2);
    assertThat(refused.allowed()).as("the tenant has room for 1").isFalse();
    assertThat(refused.decision().policy()).isEqualTo(tight);
    assertThat(admits(user, roomy)).as("nothing taken from the user").isEqualTo(userBefore);
    assertThat(admits(tenant, tight)).isEqualTo(tenantBefore);
    advanceMicros(300_000);
    first.commit(1);
    twinFirst.commit(1);
    assertThat(admits(user, roomy)).as("given back as a one-key reservation would").isEqualTo(admits(twin, roomy));
    Reservation second = limiter.reserveAsync(pairs, 2).toCompletableFuture()
        .get(10, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(second.allowed()).as("the tenant's unit came back").isTrue();
    second.cancelAsync().toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(admits(user, roomy)).isEqualTo(admits(twin, roomy));
    assertThat(limiter.peekAll(tenant, List.of(tight), 2).allowed()).as("the tenant holds only the committed 1")
        .isTrue();
  }

  @Test
  void pairsOfOneKeyAreReservedAsThatKeysPolicies() {
    Policy a = Policy.of(5, Duration.ofSeconds(10)).withName("a");
    Policy b = Policy.of(3, Duration.ofSeconds(10)).withName("b");
    String k = key("one");
    Reservation r = limiter.reserve(List.of(KeyedPolicy.of(k, a), KeyedPolicy.of(k, b)), 2);
    assertThat(r.allowed()).isTrue();
    assertThat(r.policies()).containsExactly(a, b);
    r.cancel();
    assertThat(limiter.inspect(k, b).remaining()).isEqualTo(3);
    assertThatThrownBy(() -> limiter.reserve(List.of(KeyedPolicy.of(k, a), KeyedPolicy.of(key("other"), b)), 0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> limiter.reserve(List.<KeyedPolicy>of(), 1)).isInstanceOf(IllegalArgumentException.class);
  }

  // ---------------------------------------------------------------- settling

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void aReservationCancelledAtOnceLeavesNoTrace(Algorithm algorithm) {
    Policy p = uneven(algorithm);
    String k = key("cancelled");
    String twin = key("never");
    for (String key : List.of(k, twin)) {
      limiter.check(key, p, 2);
    }
    advanceMicros(700_000);
    limiter.check(k, p, 1);
    limiter.check(twin, p, 1);
    Reservation r = limiter.reserve(k, p, 2);
    assertThat(r.allowed()).isTrue();
    assertThat(admits(k, p)).isNotEqualTo(admits(twin, p));
    r.cancel();
    assertThat(r.settled()).isTrue();
    assertThat(admits(k, p)).isEqualTo(admits(twin, p));
  }

  /** Nothing happens on the key between reserve and cancel: the limiter is as if never reserved. */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void aCancelWithNothingInBetweenIsExactLater(Algorithm algorithm) {
    Policy p = uneven(algorithm);
    for (long wait : new long[] {1, 999_999, 1_428_571, 2_500_001}) {
      String k = key("later-" + wait);
      String twin = key("twin-" + wait);
      limiter.check(k, p, 1);
      limiter.check(twin, p, 1);
      Reservation r = limiter.reserve(k, p, 3);
      advanceMicros(wait); // within the 10 s window: a sliding window's give-back lands in it
      r.cancel();
      assertThat(admits(k, p)).as("%s after %d µs", algorithm, wait).isEqualTo(admits(twin, p));
      advanceMicros(3_100_000); // every test starts on a window boundary; stay within the window
    }
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void aLowerCommitGivesBackTheSurplus(Algorithm algorithm) {
    Policy p = uneven(algorithm);
    String k = key("lower");
    String twin = key("twin");
    limiter.reserve(k, p, 4).commit(1);
    limiter.check(twin, p, 1);
    assertThat(admits(k, p)).isEqualTo(admits(twin, p));
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void anEqualCommitChangesNothing(Algorithm algorithm) {
    Policy p = uneven(algorithm);
    String k = key("equal");
    String twin = key("twin");
    limiter.reserve(k, p, 3).commit(3);
    limiter.check(twin, p, 3);
    assertThat(admits(k, p)).isEqualTo(admits(twin, p));
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void aHigherCommitChargesTheDifferenceWhateverTheLimit(Algorithm algorithm) {
    Policy p = Policy.of(5, Duration.ofSeconds(10)).withAlgorithm(algorithm);
    String k = key("higher");
    Reservation r = limiter.reserve(k, p, 2);
    r.commit(12); // the work cost more than the whole limit
    Decision now = limiter.inspect(k, p);
    assertThat(now.allowed()).isFalse();
    assertThat(now.remaining()).isZero();
    // the debt is paid before anything passes again: longer than a full limit's wait
    String full = key("full");
    limiter.check(full, p, 5);
    assertThat(limiter.check(k, p).retryAfterMicros())
        .isGreaterThanOrEqualTo(limiter.check(full, p).retryAfterMicros());
    advanceMicros(40_000_000); // longer than any debt of 12 units at 5 per 10 s
    assertThat(limiter.check(k, p).allowed()).isTrue();
  }

  @Test
  void aTokenBucketInDebtPaysItBackAtItsRefillRate() {
    Policy p = Policy.of(5, Duration.ofSeconds(10)).withAlgorithm(Algorithm.TOKEN_BUCKET);
    String k = key("debt");
    limiter.reserve(k, p, 1).commit(8); // 5 tokens, 8 taken: 3 in debt, 2 s per token
    Decision d = limiter.check(k, p);
    assertThat(d.allowed()).isFalse();
    assertThat(d.retryAfter()).isEqualTo(Duration.ofSeconds(8)); // 3 of debt and 1 to take
    advanceMicros(8_000_000);
    assertThat(limiter.check(k, p).allowed()).isTrue();
  }

  @Test
  void settlingTwiceOrWithABadCostIsRefusedAndChangesNothing() {
    Policy p = Policy.of(5, Duration.ofSeconds(10));
    String k = key("twice");
    Reservation r = limiter.reserve(k, p, 2);
    List<Object> held = admits(k, p);
    for (long bad : new long[] {0, -1, Long.MIN_VALUE, Reservation.MAX_COST + 1}) {
      assertThatThrownBy(() -> r.commit(bad)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(String.valueOf(bad));
    }
    assertThatThrownBy(() -> r.commit(0)).hasMessageContaining("cancel()");
    assertThat(r.settled()).isFalse();
    assertThat(admits(k, p)).isEqualTo(held);
    r.commit(1);
    List<Object> settled = admits(k, p);
    assertThatThrownBy(() -> r.commit(1)).isInstanceOf(IllegalStateException.class).hasMessageContaining("already settled");
    assertThatThrownBy(r::cancel).isInstanceOf(IllegalStateException.class).hasMessageContaining("already settled");
    assertThat(admits(k, p)).isEqualTo(settled);
  }

  @Test
  void reserveAsyncDecidesAndSettlesAsReserveDoes() throws Exception {
    Policy p = Policy.of(5, Duration.ofSeconds(10));
    String k = key("async");
    Reservation first = limiter.reserveAsync(k, p, 3).toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(first.allowed()).isTrue();
    assertThat(first.decision().remaining()).isEqualTo(2);
    Reservation refused = limiter.reserveAsync(k, List.of(p), 3).toCompletableFuture()
        .get(10, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(refused.allowed()).as("no room for 3 while the first holds its units").isFalse();
    assertThatThrownBy(refused::cancel).isInstanceOf(IllegalStateException.class);
    first.cancel();
    assertThat(limiter.inspect(k, p).remaining()).as("all given back").isEqualTo(5);
    assertThatThrownBy(() -> limiter.reserveAsync(k, p, 0)).as("bad input at once, not in the stage")
        .isInstanceOf(IllegalArgumentException.class);
  }

  /** A reservation resumed from its key, policies, estimate and marks settles as the original would. */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void aResumedReservationSettlesAsTheOriginalWould(Algorithm algorithm) {
    Policy p = uneven(algorithm);
    String k = key("resumed");
    String twin = key("original");
    for (String key : List.of(k, twin)) {
      limiter.check(key, p, 1);
    }
    advanceMicros(300_000);
    Reservation original = limiter.reserve(twin, p, 3);
    Reservation elsewhere = limiter.reserve(k, p, 3);
    Reservation resumed = limiter.resume(k, List.of(p), 3, elsewhere.marks());
    assertThat(resumed.allowed()).isTrue();
    assertThat(resumed.decision().remaining()).as("its decisions are not known here").isEqualTo(-1);
    advanceMicros(200_000);
    original.commit(1);
    resumed.commit(1);
    assertThat(admits(k, p)).isEqualTo(admits(twin, p));
    assertThatThrownBy(() -> limiter.resume(k, List.of(p), 3, List.of())).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("one mark per policy");
    limiter.reset(k, p);
    limiter.check(k, p, 2);
    List<Object> after = admits(k, p);
    limiter.resume(k, List.of(p), 3, elsewhere.marks()).cancel();
    assertThat(admits(k, p)).as("a mark of a state since reset returns nothing").isEqualTo(after);
  }

  /** commitAsync and cancelAsync settle as commit and cancel do, every algorithm. */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void asyncSettlesGiveBackAsTheirSyncForms(Algorithm algorithm) throws Exception {
    Policy p = uneven(algorithm);
    String k = key("async-settle");
    String twin = key("sync-settle");
    Reservation a = limiter.reserve(k, p, 3);
    Reservation b = limiter.reserve(twin, p, 3);
    advanceMicros(250_000);
    a.commitAsync(1).toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS);
    b.commit(1);
    assertThat(admits(k, p)).isEqualTo(admits(twin, p));
    Reservation c = limiter.reserve(k, p, 1);
    Reservation d = limiter.reserve(twin, p, 1);
    c.cancelAsync().toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS);
    d.cancel();
    assertThat(admits(k, p)).isEqualTo(admits(twin, p));
  }

  @Test
  void theLimiterSaysItTakesReservations() {
    assertThat(limiter.takesReservations()).as("what countWhen and count-when ask at start-up").isTrue();
  }

  @Test
  void badEstimatesAreRefusedBeforeAnythingIsTaken() {
    Policy p = Policy.of(5, Duration.ofSeconds(10));
    String k = key("bad");
    assertThatThrownBy(() -> limiter.reserve(k, p, 0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("was 0");
    assertThatThrownBy(() -> limiter.reserve(k, p, 6)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("capacity 5");
    assertThatThrownBy(() -> limiter.reserve("", p, 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> limiter.reserve(k, (Policy) null, 1)).isInstanceOf(IllegalArgumentException.class);
    assertThat(limiter.inspect(k, p).remaining()).isEqualTo(5);
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void aGiveBackAfterAResetReturnsNothing(Algorithm algorithm) {
    Policy p = uneven(algorithm);
    String k = key("reset");
    Reservation r = limiter.reserve(k, p, 3);
    limiter.reset(k, p);
    limiter.check(k, p, 2);
    List<Object> after = admits(k, p);
    r.cancel(); // the units it took were forgotten by the reset: nothing of the new state comes back
    assertThat(admits(k, p)).isEqualTo(after);
  }

  /**
   * Units out on a reservation refill meanwhile (the bucket would have been full without them);
   * checks then take the room; a naive give-back of the units' time would credit them twice.
   */
  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"TOKEN_BUCKET", "GCRA", "LEAKY_BUCKET"})
  void unitsThatRefilledWhileOutAreNotCreditedTwice(Algorithm algorithm) {
    Policy p = uneven(algorithm); // 5 of burst, one unit per 10/7 s
    String k = key("refilled");
    String twin = key("twin");
    Reservation r = limiter.reserve(k, p, 3);
    advanceMicros(2 * 10_000_000L / 7 + 1); // two of the three units are back in the bucket
    assertThat(limiter.check(k, p, 4).allowed()).isTrue(); // takes them, and two more
    assertThat(limiter.check(twin, p, 4).allowed()).isTrue();
    r.cancel();
    assertThat(admits(k, p)).isEqualTo(admits(twin, p));
  }

  @ParameterizedTest
  @EnumSource(value = Algorithm.class, names = {"FIXED_WINDOW", "SLIDING_WINDOW"})
  void aWindowThatHasEndedTakesNothingBack(Algorithm algorithm) {
    Policy p = uneven(algorithm);
    String k = key("ended");
    Reservation r = limiter.reserve(k, p, 3);
    advanceMicros(10_000_000); // the next window
    limiter.check(k, p, 1);
    List<Object> after = admits(k, p);
    r.cancel();
    assertThat(admits(k, p)).isEqualTo(after);
  }

  // ---------------------------------------------------------------- in flight at once

  /** Callers that each hold a unit while they work: no more pass than the limit, however many at once. */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void reservationsInFlightNeverPassBeyondTheLimit(Algorithm algorithm) throws Exception {
    Policy p = Policy.of(4, Duration.ofMinutes(1)).withAlgorithm(algorithm);
    String k = key("race");
    int callers = 8;
    ExecutorService pool = Executors.newFixedThreadPool(callers);
    try {
      CountDownLatch start = new CountDownLatch(1);
      CountDownLatch reserved = new CountDownLatch(callers);
      List<Future<Boolean>> outcomes = new ArrayList<>();
      for (int i = 0; i < callers; i++) {
        outcomes.add(pool.submit(() -> {
          start.await();
          Reservation r = limiter.reserve(k, p, 1);
          reserved.countDown();
          reserved.await(); // every caller is in flight before any settles
          if (r.allowed()) {
            r.commit(1); // every call failed: each counts
          }
          return r.allowed();
        }));
      }
      start.countDown();
      int passed = 0;
      for (Future<Boolean> f : outcomes) {
        passed += f.get(30, TimeUnit.SECONDS) ? 1 : 0;
      }
      assertThat(passed).isEqualTo(4);
      assertThat(limiter.check(k, p).allowed()).isFalse();
    } finally {
      pool.shutdownNow();
    }
  }

  // ---------------------------------------------------------------- random traces

  /** The number of the window of {@code p} that holds the clock's time. */
  private long windowOf(Policy p) {
    long now = java.time.temporal.ChronoUnit.MICROS.between(java.time.Instant.EPOCH, clock.instant());
    return Math.floorDiv(now, p.windowMicros());
  }

  /** How many random traces each algorithm runs; a remote backend may run fewer. */
  protected int traces() {
    return 24;
  }

  /**
   * Random traces of checks, reservations, settles and waits on two keys that see the same calls
   * but one: a reservation made on the first key only (a call only the second would admit is left
   * out, so that both keep one history). Once it is made, the first admits no cost the second does
   * not; and when nothing
   * happened on the key between that reservation and its cancel, the two admit exactly alike.
   */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void aGiveBackNeverAdmitsMoreThanIfTheUnitsHadNeverBeenTaken(Algorithm algorithm) {
    Policy p = uneven(algorithm);
    for (int trace = 0; trace < traces(); trace++) {
      java.util.Random random = new java.util.Random(trace * 31L + algorithm.ordinal());
      String with = key("with-" + trace);
      String without = key("without-" + trace);
      List<Reservation[]> open = new ArrayList<>(); // pairs: the same reservation on both keys
      Reservation extra = null; // on the first key only
      boolean extraSettled = false;
      boolean quietSinceExtra = false;
      long extraWindow = 0;
      for (int step = 0; step < 50; step++) {
        String as = algorithm + " trace " + trace + " step " + step;
        int op = random.nextInt(10);
        long cost = 1 + random.nextInt((int) p.capacity());
        boolean same;
        boolean comparable = limiter.peekAll(with, List.of(p), cost).allowed()
            == limiter.peekAll(without, List.of(p), cost).allowed();
        if (op <= 3 && !comparable) {
          continue; // one key would admit it and the other not: such a call would part their histories
        }
        if (op <= 1) {
          same = limiter.check(with, p, cost).allowed() == limiter.check(without, p, cost).allowed();
          quietSinceExtra = false;
        } else if (op <= 3) {
          Reservation a = limiter.reserve(with, p, cost);
          Reservation b = limiter.reserve(without, p, cost);
          same = a.allowed() == b.allowed();
          if (a.allowed() && b.allowed()) {
            open.add(new Reservation[] {a, b});
          }
          quietSinceExtra = false;
        } else if (op <= 5 && !open.isEmpty()) {
          Reservation[] pair = open.remove(random.nextInt(open.size()));
          long actual = random.nextInt((int) pair[0].estimate() + 2); // 0: cancel
          for (Reservation r : pair) {
            if (actual == 0) {
              r.cancel();
            } else {
              r.commit(actual);
            }
          }
          same = true;
          quietSinceExtra = false;
        } else if (op == 6 && extra == null) {
          extra = limiter.reserve(with, p, cost);
          extraWindow = windowOf(p);
          same = true;
          quietSinceExtra = extra.allowed();
          if (!extra.allowed()) {
            extra = null;
          }
        } else if (op == 7 && extra != null && !extraSettled) {
          long actual = random.nextInt((int) extra.estimate()); // lower: 0 is a cancel
          if (actual == 0) {
            extra.cancel();
          } else {
            extra.commit(actual);
          }
          extraSettled = true;
          same = true;
          boolean sameWindow = windowOf(p) == extraWindow; // a sliding window's ended window takes nothing back
          if (quietSinceExtra && actual == 0 && (algorithm != Algorithm.SLIDING_WINDOW || sameWindow)) {
            assertThat(admits(with, p)).as("%s: a quiet cancel is exact", as).isEqualTo(admits(without, p));
          }
        } else {
          long wait = random.nextBoolean() ? random.nextInt(2_000_000) : random.nextInt(20_000);
          advanceMicros(wait);
          same = true;
        }
        assertThat(same).as("%s: a call both keys would admit was decided apart", as).isTrue();
        if (extra != null) {
          assertAdmitsNoMore(with, without, p, as);
        }
      }
    }
  }
}

package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.RateLimitListener.Outcome;
import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.spi.Command;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The limiter's side of reservations: failure modes, settles that fail, shadow policies, listeners. */
class ReservationTest {
  private final Policy policy = Policy.of(5, Duration.ofMinutes(1)).withName("api");
  private final ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
  private final ControllableBackend backend = new ControllableBackend();
  private final RecordingListener listener = new RecordingListener();

  private RateLimiter limiter(FailureMode mode) {
    return RateLimiter.builder().clock(clock).backend(backend).failureMode(mode).nearCache(false)
        .circuitBreaker(0, Duration.ofSeconds(1)).listener(listener).build();
  }

  @Test
  void aReserveIsReportedAsACheck() {
    try (RateLimiter limiter = limiter(FailureMode.FAIL_OPEN)) {
      Reservation r = limiter.reserve("k", policy, 2);
      assertThat(r.allowed()).isTrue();
      assertThat(r.decision().remaining()).isEqualTo(3);
      assertThat(r.key()).isEqualTo("k");
      assertThat(r.estimate()).isEqualTo(2);
      assertThat(r.policies()).containsExactly(policy);
      assertThat(listener.decisions).containsExactly("api:" + Outcome.ALLOWED);
      assertThat(backend.reserveCalls).hasValue(1);
    }
  }

  @Test
  void underFailOpenAReservationPassesAndHoldsNothing() {
    try (RateLimiter limiter = limiter(FailureMode.FAIL_OPEN)) {
      backend.mode = ControllableBackend.Mode.THROW;
      Reservation r = limiter.reserve("k", policy, 2);
      assertThat(r.allowed()).isTrue();
      assertThat(listener.decisions).containsExactly("api:" + Outcome.FAILURE_ALLOWED);
      backend.mode = ControllableBackend.Mode.OK;
      r.commit(4); // nothing was taken on the backend: nothing to settle there
      assertThat(backend.settleCalls).hasValue(0);
      assertThat(limiter.inspect("k", policy).remaining()).isEqualTo(5);
    }
  }

  @Test
  void underFailClosedAReservationIsRefused() {
    try (RateLimiter limiter = limiter(FailureMode.FAIL_CLOSED)) {
      backend.mode = ControllableBackend.Mode.THROW;
      Reservation r = limiter.reserve("k", policy, 1);
      assertThat(r.allowed()).isFalse();
      assertThatThrownBy(r::cancel).isInstanceOf(IllegalStateException.class);
    }
  }

  @Test
  void aSettleThatFailsNeverThrowsAndLeavesTheEstimateCharged() {
    try (RateLimiter limiter = limiter(FailureMode.FAIL_OPEN)) {
      Reservation r = limiter.reserve("k", policy, 3);
      assertThat(limiter.failedSettles()).isZero();
      backend.mode = ControllableBackend.Mode.THROW;
      r.cancel();
      assertThat(r.settled()).isTrue();
      assertThat(listener.errors).containsExactly(ControllableBackend.DOWN);
      assertThat(limiter.failedSettles()).as("counted, for the metric").isEqualTo(1);
      backend.mode = ControllableBackend.Mode.OK;
      assertThat(limiter.inspect("k", policy).remaining()).isEqualTo(2);
      assertThat(backend.settleCalls).hasValue(1);
    }
  }

  @Test
  void aFailedSettleIsLoggedAsSuchSyncAndAsync() throws Exception {
    try (RateLimiter limiter = limiter(FailureMode.FAIL_OPEN); LogCapture log = new LogCapture(RateLimiter.class)) {
      Reservation sync = limiter.reserve("k", policy, 1);
      Reservation async = limiter.reserve("k", policy, 1);
      backend.mode = ControllableBackend.Mode.THROW;
      sync.cancel();
      assertThat(async.cancelAsync().toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS))
          .as("never completes exceptionally").isNull();
      assertThat(limiter.failedSettles()).isEqualTo(2);
      assertThat(sync.settleFailed()).isTrue();
      assertThat(async.settleFailed()).isTrue();
      backend.mode = ControllableBackend.Mode.OK;
      Reservation fine = limiter.reserve("k", policy, 1);
      assertThat(fine.settleFailed()).as("not settled yet").isFalse();
      fine.commit(2);
      assertThat(fine.settleFailed()).isFalse();
      assertThat(log.lines(java.util.logging.Level.WARNING)).first().asString()
          .startsWith("a reservation's settle could not reach the rate limiter's backend; it is tried again")
          .doesNotContain("FAIL_OPEN decides");
    }
  }

  /** A remote backend's settle that fails fast is sent again within the timeout, with the same identity. */
  @Test
  void aFailedSettleIsTriedAgainWithItsIdentityWithinTheTimeout() throws Exception {
    backend.remote = true;
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(backend).nearCache(false)
        .timeout(Duration.ofSeconds(5)).circuitBreaker(0, Duration.ofSeconds(1)).listener(listener).build()) {
      Reservation sync = limiter.reserve("k", policy, 2);
      backend.next.addAll(List.of(ControllableBackend.Mode.THROW, ControllableBackend.Mode.FAIL_STAGE));
      sync.cancel();
      assertThat(backend.settleCalls).as("two failures, then it went through").hasValue(3);
      assertThat(backend.settleIds).hasSize(3).doesNotContain(0L).containsOnly(backend.settleIds.peek());
      assertThat(limiter.failedSettles()).isZero();
      assertThat(limiter.inspect("k", policy).remaining()).isEqualTo(5);

      Reservation async = limiter.reserve("k", policy, 3);
      backend.settleIds.clear();
      backend.next.addAll(List.of(ControllableBackend.Mode.THROW, ControllableBackend.Mode.THROW));
      async.commitAsync(1).toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS);
      assertThat(backend.settleIds).hasSize(3).containsOnly(backend.settleIds.peek());
      assertThat(limiter.failedSettles()).isZero();
      assertThat(limiter.inspect("k", policy).remaining()).as("2 given back").isEqualTo(4);
    }
  }

  @Test
  void aSettleThatKeepsFailingIsTriedWithinTheTimeoutThenCountedOnce() throws Exception {
    backend.remote = true;
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(backend).nearCache(false)
        .timeout(Duration.ofSeconds(2)).circuitBreaker(0, Duration.ofSeconds(1)).listener(listener).build()) {
      // 2 s: a retry needs the 10 ms pause to fit in what is left, however busy the machine
      Reservation sync = limiter.reserve("k", policy, 2);
      Reservation async = limiter.reserve("k", policy, 2);
      backend.mode = ControllableBackend.Mode.THROW;
      sync.cancel();
      int tries = backend.settleCalls.get();
      assertThat(tries).as("tried again while the timeout lasted").isGreaterThan(1);
      assertThat(limiter.failedSettles()).as("one settle, counted once").isEqualTo(1);
      async.cancelAsync().toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS);
      assertThat(backend.settleCalls.get() - tries).isGreaterThan(1);
      assertThat(limiter.failedSettles()).isEqualTo(2);
      backend.mode = ControllableBackend.Mode.OK;
      assertThat(limiter.inspect("k", policy).remaining()).as("nothing given back").isEqualTo(1);
    }
  }

  @Test
  void aLocalBackendsSettleCarriesNoIdentityAndIsNotTriedAgain() {
    try (RateLimiter limiter = limiter(FailureMode.FAIL_OPEN)) {
      Reservation r = limiter.reserve("k", policy, 2);
      backend.mode = ControllableBackend.Mode.THROW;
      r.cancel();
      assertThat(backend.settleCalls).hasValue(1);
      assertThat(backend.settleIds).containsExactly(0L);
    }
  }

  @Test
  void commitAsyncAndCancelAsyncSettleAsCommitAndCancelDo() throws Exception {
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).build()) {
      Reservation lower = limiter.reserve("k", policy, 3);
      assertThat(lower.commitAsync(1).toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS)).isNull();
      assertThat(limiter.inspect("k", policy).remaining()).as("2 given back").isEqualTo(4);
      Reservation cancelled = limiter.reserve("k", policy, 2);
      cancelled.cancelAsync().toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS);
      assertThat(limiter.inspect("k", policy).remaining()).isEqualTo(4);
      assertThatThrownBy(cancelled::cancelAsync).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("already settled");
      Reservation bad = limiter.reserve("k", policy, 1);
      assertThatThrownBy(() -> bad.commitAsync(0)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("cancel()");
      assertThat(bad.settled()).as("a refused settle settles nothing").isFalse();
      bad.commitAsync(3).toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS);
      assertThat(limiter.inspect("k", policy).remaining()).as("2 charged beyond the estimate").isEqualTo(1);
    }
  }

  @Test
  void aSettleThatTimesOutIsDecidedWithinTheTimeout() {
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(backend).nearCache(false)
        .timeout(Duration.ofMillis(50)).circuitBreaker(0, Duration.ofSeconds(1)).listener(listener).build()) {
      Reservation r = limiter.reserve("k", policy, 3);
      backend.mode = ControllableBackend.Mode.HANG;
      r.commit(1); // returns once the timeout has passed, without the answer
      assertThat(listener.errors).singleElement().isInstanceOf(java.util.concurrent.TimeoutException.class);
      assertThat(limiter.failedSettles()).isEqualTo(1);
      backend.releaseHeld();
    }
  }

  @Test
  void aShadowPolicyThatWouldDenyHoldsNothing() {
    Policy shadow = Policy.of(2, Duration.ofMinutes(1)).withName("shadow");
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(backend).nearCache(false)
        .shadowPolicies(Set.of("shadow")).build()) {
      limiter.check("k", shadow);
      limiter.check("k", shadow);
      Reservation r = limiter.reserve("k", List.of(policy, shadow), 2);
      assertThat(r.allowed()).isTrue();
      assertThat(limiter.inspect("k", policy).remaining()).isEqualTo(3);
      r.cancel();
      assertThat(limiter.inspect("k", policy).remaining()).isEqualTo(5);
      assertThat(limiter.inspect("k", shadow).remaining()).isZero();
    }
  }

  @Test
  void asyncAShadowPolicyThatWouldDenyHoldsNothingAndTheEnforcedOnesAreReservedAgain() throws Exception {
    Policy shadow = Policy.of(2, Duration.ofMinutes(1)).withName("shadow");
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(backend).nearCache(false)
        .shadowPolicies(Set.of("shadow")).build()) {
      limiter.check("k", shadow);
      limiter.check("k", shadow);
      Reservation r = limiter.reserveAsync("k", List.of(policy, shadow), 2).toCompletableFuture()
          .get(10, java.util.concurrent.TimeUnit.SECONDS);
      assertThat(r.allowed()).isTrue();
      assertThat(limiter.inspect("k", policy).remaining()).isEqualTo(3);
      r.cancel();
      assertThat(limiter.inspect("k", policy).remaining()).isEqualTo(5);
    }
  }

  @Test
  void asyncUnderFailOpenASettleSendsNothing() throws Exception {
    try (RateLimiter limiter = limiter(FailureMode.FAIL_OPEN)) {
      backend.mode = ControllableBackend.Mode.THROW;
      Reservation r = limiter.reserveAsync("k", policy, 1).toCompletableFuture()
          .get(10, java.util.concurrent.TimeUnit.SECONDS);
      assertThat(r.allowed()).as("the failure mode's answer").isTrue();
      backend.mode = ControllableBackend.Mode.OK;
      r.cancel();
      assertThat(backend.settleCalls).as("nothing was held on the backend").hasValue(0);
    }
  }

  @Test
  void aBackendWithoutReservationsIsAConfigurationError() {
    Backend checksOnly = new Backend() {
      private final InMemoryBackend memory = InMemoryBackend.create();

      @Override
      public <R> R execute(Command<R> command) {
        return memory.execute(command);
      }
    };
    try (RateLimiter limiter = RateLimiter.builder().backend(checksOnly).build()) {
      assertThat(limiter.takesReservations()).isFalse();
      assertThatThrownBy(() -> limiter.reserve("k", policy, 1))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("Backend.reserves()");
    }
  }

  @Test
  void aRefusedReservationSaysWhy() {
    try (RateLimiter limiter = limiter(FailureMode.FAIL_OPEN)) {
      limiter.check("k", policy, 5);
      Reservation r = limiter.reserve("k", policy, 1);
      assertThat(r.allowed()).isFalse();
      assertThat(r.decision().retryAfter()).isPositive();
      assertThat(r.toString()).contains("allowed=false", "api");
    }
  }
}

package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.ControllableBackend.Mode;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** checkAllAsync: checkAll's answers, without waiting for the backend on the calling thread. */
class CheckAllAsyncTest {
  private final ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
  private final ControllableBackend backend = new ControllableBackend();
  private final RecordingListener events = new RecordingListener();
  private final Policy perSecond = Policy.of(2, Duration.ofSeconds(1)).withName("per-second");
  private final Policy perMinute = Policy.of(3, Duration.ofMinutes(1)).withName("per-minute");

  @AfterEach
  void release() {
    backend.releaseHeld();
  }

  private RateLimiter.Builder builder(FailureMode mode) {
    return RateLimiter.builder().clock(clock).backend(backend).failureMode(mode).timeout(Duration.ofMillis(100))
        .listener(events);
  }

  @Test
  void answersAsCheckAllAllOrNothing() {
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).build()) {
      List<Policy> both = List.of(perSecond, perMinute);
      assertThat(limiter.checkAllAsync("k", both, 1).toCompletableFuture().join().allowed()).isTrue();
      assertThat(limiter.checkAllAsync("k", both, 1).toCompletableFuture().join().allowed()).isTrue();
      MultiDecision third = limiter.checkAllAsync("k", both, 1).toCompletableFuture().join();
      assertThat(third.allowed()).isFalse();
      assertThat(third.limiting().policy()).isEqualTo(perSecond);
      assertThat(third.limiting().retryAfterMicros()).isEqualTo(500_000);
      clock.advance(Duration.ofSeconds(1));
      MultiDecision fourth = limiter.checkAllAsync("k", both, 1).toCompletableFuture().join();
      assertThat(fourth.allowed()).isTrue();
      assertThat(fourth.decisions().get(1).remaining()).as("the denial consumed nothing").isZero();
    }
  }

  @Test
  void refusesBadInputBeforeAStageExists() {
    try (RateLimiter limiter = RateLimiter.inMemory()) {
      assertThatThrownBy(() -> limiter.checkAllAsync("k", List.of(), 1)).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> limiter.checkAllAsync("", List.of(perSecond), 1))
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  @Test
  @Timeout(10)
  void doesNotWaitForTheBackendAndCompletesWhenItAnswers() throws Exception {
    backend.mode = Mode.HANG;
    try (RateLimiter limiter = builder(FailureMode.FAIL_CLOSED).timeout(Duration.ofSeconds(30)).build()) {
      CompletableFuture<MultiDecision> answer = limiter.checkAllAsync("k", List.of(perSecond, perMinute), 1)
          .toCompletableFuture();
      assertThat(answer).as("returned before the backend answered").isNotDone();
      backend.releaseHeld();
      MultiDecision m = answer.get(5, TimeUnit.SECONDS);
      assertThat(m.allowed()).isTrue();
      assertThat(m.decisions()).extracting(Decision::remaining).containsExactly(1L, 2L);
      assertThat(m.decisions()).noneMatch(Decision::isDegraded);
    }
    assertThat(events.calls).containsExactly(true);
  }

  @ParameterizedTest
  @EnumSource(FailureMode.class)
  @Timeout(10)
  void aHangingBackendIsDecidedByTheFailureModeAtTheTimeout(FailureMode mode) throws Exception {
    backend.mode = Mode.HANG;
    try (RateLimiter limiter = builder(mode).circuitBreaker(0, Duration.ZERO).build()) {
      MultiDecision m = limiter.checkAllAsync("k", List.of(perSecond, perMinute), 1).toCompletableFuture()
          .get(5, TimeUnit.SECONDS);
      assertThat(m.decisions()).hasSize(2);
      switch (mode) {
        case FAIL_OPEN -> assertThat(m.allowed()).isTrue();
        case FAIL_CLOSED -> assertThat(m.allowed()).isFalse();
        case LOCAL_FALLBACK -> assertThat(m.decisions()).noneMatch(Decision::isDegraded);
      }
      if (mode != FailureMode.LOCAL_FALLBACK) {
        assertThat(m.decisions()).allMatch(Decision::isDegraded);
      }
    }
    assertThat(events.errors).singleElement().isInstanceOf(TimeoutException.class);
  }

  @Test
  void aFailedStageNeverFailsTheCaller() {
    backend.mode = Mode.FAIL_STAGE;
    try (RateLimiter limiter = builder(FailureMode.FAIL_OPEN).build()) {
      CompletableFuture<MultiDecision> answer = limiter.checkAllAsync("k", List.of(perSecond), 1).toCompletableFuture();
      MultiDecision m = answer.join();
      assertThat(answer.isCompletedExceptionally()).isFalse();
      assertThat(m.allowed()).isTrue();
      assertThat(m.decisions().get(0).isDegraded()).isTrue();
    }
  }

  @Test
  void onlyAShadowDenialChecksTheEnforcedPoliciesAgain() {
    Policy shadow = Policy.of(1, Duration.ofMinutes(1)).withName("new-limit");
    try (RateLimiter limiter = builder(FailureMode.FAIL_OPEN).shadowPolicies(Set.of("new-limit")).build()) {
      List<Policy> both = List.of(shadow, perMinute);
      assertThat(limiter.checkAllAsync("k", both, 1).toCompletableFuture().join().allowed()).isTrue();
      MultiDecision second = limiter.checkAllAsync("k", both, 1).toCompletableFuture().join();
      assertThat(second.allowed()).as("the shadow policy never denies").isTrue();
      assertThat(second.decisions().get(1).remaining()).as("the enforced policy was charged").isEqualTo(1);
      assertThat(backend.checkAllCalls).hasValue(3); // one, then the denied pair and the enforced one alone
    }
  }
}

package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.ControllableBackend.Mode;
import dev.ratelimit.RateLimitListener.Outcome;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * peekAll on the request path: what checkAll would decide, nothing consumed; failures decided by
 * the failure mode, shadow policies never denying, only denials reported (the arithmetic is the
 * contract suite's, {@code peekAllAnswersAsCheckAllAndConsumesNothing}).
 */
class PeekAllTest {
  private final ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
  private final ControllableBackend backend = new ControllableBackend();
  private final RecordingListener events = new RecordingListener();
  private final LogCapture log = new LogCapture();
  private final Policy login = Policy.of(2, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW).withName("login");

  @AfterEach
  void closeLog() {
    log.close();
  }

  private RateLimiter.Builder builder(FailureMode mode) {
    return RateLimiter.builder().clock(clock).backend(backend).failureMode(mode).circuitBreaker(0, null)
        .listener(events);
  }

  @Test
  void anAllowedPeekIsNotReportedADenialIs() {
    try (RateLimiter limiter = builder(FailureMode.FAIL_OPEN).build()) {
      assertThat(limiter.peekAll("k", List.of(login), 1).allowed()).isTrue();
      assertThat(events.decisions).as("the charge reports it").isEmpty();
      limiter.checkAll("k", List.of(login), 2);
      events.clear();
      MultiDecision denied = limiter.peekAll("k", List.of(login), 1);
      assertThat(denied.allowed()).isFalse();
      assertThat(denied.limiting().retryAfter()).isEqualTo(Duration.ofSeconds(40)); // the minute's end
      assertThat(events.decisions).containsExactly("login:DENIED");
    }
  }

  @Test
  void failOpenAllowsWithoutNumbersFailClosedDenies() {
    backend.mode = Mode.THROW;
    try (RateLimiter limiter = builder(FailureMode.FAIL_OPEN).build()) {
      MultiDecision open = limiter.peekAll("k", List.of(login), 1);
      assertThat(open.allowed()).isTrue();
      assertThat(open.decisions().get(0).isDegraded()).isTrue();
    }
    assertThat(events.errors).as("the failure reported").isNotEmpty();
    try (RateLimiter limiter = builder(FailureMode.FAIL_CLOSED).failClosedRetryAfter(Duration.ofSeconds(3)).build()) {
      MultiDecision closed = limiter.peekAll("k", List.of(login), 1);
      assertThat(closed.allowed()).isFalse();
      assertThat(closed.limiting().retryAfter()).isEqualTo(Duration.ofSeconds(3));
    }
  }

  @Test
  void theLocalFallbackIsReadNotCharged() {
    try (RateLimiter limiter = builder(FailureMode.LOCAL_FALLBACK).build()) {
      backend.mode = Mode.THROW;
      for (int i = 0; i < 5; i++) {
        assertThat(limiter.peekAll("k", List.of(login), 2).allowed()).as("peek %s", i).isTrue();
      }
      assertThat(limiter.checkAll("k", List.of(login), 2).allowed()).as("the fallback's room untouched").isTrue();
      MultiDecision full = limiter.peekAll("k", List.of(login), 1);
      assertThat(full.allowed()).isFalse();
      assertThat(full.limiting().retryAfter()).isEqualTo(Duration.ofSeconds(40));
    }
  }

  @Test
  void aShadowPolicyNeverDenies() {
    Policy enforced = Policy.of(10, Duration.ofMinutes(1)).withName("api");
    try (RateLimiter limiter = builder(FailureMode.FAIL_OPEN).shadowPolicies(Set.of("login")).build()) {
      limiter.checkAll("k", List.of(login), 2);
      events.clear();
      MultiDecision peek = limiter.peekAll("k", List.of(login, enforced), 1);
      assertThat(peek.allowed()).isTrue();
      assertThat(peek.decisions()).extracting(Decision::allowed).containsExactly(true, true);
      assertThat(peek.decisions().get(0).remaining()).as("the backend's numbers").isZero();
      assertThat(events.decisions).isEmpty();
      limiter.checkAll("k", List.of(enforced), 10);
      events.clear();
      assertThat(limiter.peekAll("k", List.of(login, enforced), 1).allowed()).isFalse();
      assertThat(events.decisions).containsExactly("login:SHADOW_DENIED", "api:DENIED");
    }
  }

  @Test
  void theOpenCircuitSkipsTheBackend() {
    // the breaker's nanosecond clock stands still: no probe comes due however slow the machine
    try (RateLimiter limiter = builder(FailureMode.FAIL_CLOSED).circuitBreaker(2, Duration.ofMinutes(1))
        .nanoTime(() -> 0L).build()) {
      backend.mode = Mode.THROW;
      limiter.peekAll("k", List.of(login), 1);
      limiter.peekAll("k", List.of(login), 1);
      int calls = events.calls.size();
      assertThat(limiter.peekAll("k", List.of(login), 1).allowed()).isFalse();
      assertThat(events.calls).as("no backend call while the circuit is open").hasSize(calls);
      assertThat(limiter.circuitState()).isEqualTo(RateLimitListener.CircuitState.OPEN);
    }
  }

  @Test
  void badInputIsRefusedAsCheckAllRefusesIt() {
    try (RateLimiter limiter = builder(FailureMode.FAIL_OPEN).build()) {
      assertThatThrownBy(() -> limiter.peekAll("k", List.of(login), 3)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("capacity 2");
      assertThatThrownBy(() -> limiter.peekAll("", List.of(login), 1)).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> limiter.peekAll("k", List.of(), 1)).isInstanceOf(IllegalArgumentException.class);
    }
  }

  /**
   * Another implementation of the interface gets the default, built on inspect: exact for one unit,
   * and for more a wait that is never earlier than the exact one.
   */
  @Test
  void theDefaultAnswersFromInspectNeverTooEarly() {
    Policy bucket = Policy.of(10, Duration.ofSeconds(10), Algorithm.TOKEN_BUCKET).withName("bucket");
    try (RateLimiter exact = RateLimiter.builder().clock(clock).build()) {
      RateLimiter other = new InspectOnly(exact);
      exact.check("k", bucket, 9);
      assertThat(other.peekAll("k", List.of(bucket), 1)).isEqualTo(exact.peekAll("k", List.of(bucket), 1));
      MultiDecision exactly = exact.peekAll("k", List.of(bucket), 3);
      MultiDecision derived = other.peekAll("k", List.of(bucket), 3);
      assertThat(exactly.allowed()).isFalse();
      assertThat(derived.allowed()).isFalse();
      assertThat(exactly.limiting().retryAfter()).isEqualTo(Duration.ofSeconds(2));
      assertThat(derived.limiting().retryAfter()).as("until full: 9 tokens at 1 a second")
          .isEqualTo(Duration.ofSeconds(9));
    }
  }

  /** A limiter that is not the built one: only inspect answers. */
  private record InspectOnly(RateLimiter delegate) implements RateLimiter {
    @Override
    public Decision check(String key, Policy policy, long cost) {
      throw new AssertionError("not called");
    }

    @Override
    public MultiDecision checkAll(String key, List<Policy> policies, long cost) {
      throw new AssertionError("not called");
    }

    @Override
    public CompletionStage<Decision> checkAsync(String key, Policy policy, long cost) {
      throw new AssertionError("not called");
    }

    @Override
    public Decision inspect(String key, Policy policy) {
      return delegate.inspect(key, policy);
    }

    @Override
    public void reset(String key, Policy policy) {}

    @Override
    public void close() {}
  }
}

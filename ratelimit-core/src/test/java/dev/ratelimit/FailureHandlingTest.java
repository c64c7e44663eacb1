package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.ControllableBackend.Mode;
import dev.ratelimit.RateLimitListener.Outcome;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Timeouts, the failure modes, errors and their reports, against a backend told how to fail. */
class FailureHandlingTest {
  /** Generous: the bound under test is "the timeout, not the backend's hang". */
  private static final long MARGIN_NANOS = TimeUnit.SECONDS.toNanos(1);
  private static final Duration TIMEOUT = Duration.ofMillis(100);

  private final ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
  private final ControllableBackend backend = new ControllableBackend();
  private final RecordingListener events = new RecordingListener();
  private final AtomicLong nanos = new AtomicLong();
  private final Policy policy = Policy.of(2, Duration.ofSeconds(10)).withName("api");
  private final Policy other = Policy.of(5, Duration.ofSeconds(10)).withName("other");
  private final LogCapture log = new LogCapture();

  @AfterEach
  void closeLog() {
    backend.releaseHeld();
    log.close();
  }

  private RateLimiter.Builder builder(FailureMode mode) {
    return RateLimiter.builder().clock(clock).backend(backend).failureMode(mode).timeout(TIMEOUT)
        .listener(events).nanoTime(nanos::get);
  }

  // ---------------------------------------------------------------- timeouts

  @ParameterizedTest
  @EnumSource(FailureMode.class)
  @Timeout(10) // a regression hangs: fail it rather than wait
  void aHangingBackendCostsTheTimeoutNotTheHang(FailureMode mode) throws Exception {
    backend.mode = Mode.HANG;
    try (RateLimiter limiter = builder(mode).circuitBreaker(0, Duration.ZERO).build()) {
      long start = System.nanoTime();
      Decision d = limiter.check("k", policy);
      assertThat(System.nanoTime() - start).as("check returned by the timeout")
          .isLessThan(TIMEOUT.toNanos() + MARGIN_NANOS);
      assertFailureDecision(d, mode);

      start = System.nanoTime();
      MultiDecision m = limiter.checkAll("k", List.of(policy, other), 1);
      assertThat(System.nanoTime() - start).as("checkAll returned by the timeout")
          .isLessThan(TIMEOUT.toNanos() + MARGIN_NANOS);
      assertThat(m.decisions()).hasSize(2);
      assertFailureDecision(m.decisions().get(0), mode);

      start = System.nanoTime();
      CompletableFuture<Decision> async = limiter.checkAsync("k", policy, 1).toCompletableFuture();
      assertThat(System.nanoTime() - start).as("checkAsync does not block").isLessThan(MARGIN_NANOS);
      Decision late = async.get(TIMEOUT.toNanos() + MARGIN_NANOS, TimeUnit.NANOSECONDS);
      assertThat(async.isCompletedExceptionally()).isFalse();
      assertFailureDecision(late, mode);
    }
    assertThat(events.errors).hasSize(3).allSatisfy(e -> assertThat(e)
        .isInstanceOf(TimeoutException.class).hasMessageContaining("PT0.1S"));
    assertThat(events.calls).containsExactly(false, false, false);
    assertThat(events.callNanos).allSatisfy(n -> assertThat(n).isPositive());
  }

  private void assertFailureDecision(Decision d, FailureMode mode) {
    switch (mode) {
      case FAIL_OPEN -> {
        assertThat(d.allowed()).isTrue();
        assertThat(d.isDegraded()).isTrue();
        assertThat(d.remaining()).isEqualTo(-1);
      }
      case FAIL_CLOSED -> {
        assertThat(d.allowed()).isFalse();
        assertThat(d.isDegraded()).isTrue();
        assertThat(d.retryAfter()).isEqualTo(Duration.ofSeconds(1));
      }
      case LOCAL_FALLBACK -> {
        assertThat(d.isDegraded()).as("a real local decision").isFalse();
        assertThat(d.remaining()).isNotNegative();
      }
    }
  }

  @Test
  @Timeout(10)
  void anAnswerAfterTheTimeoutChangesNothing() throws Exception {
    backend.mode = Mode.HANG;
    try (RateLimiter limiter = builder(FailureMode.FAIL_CLOSED).build()) {
      CompletableFuture<Decision> async = limiter.checkAsync("k", policy, 1).toCompletableFuture();
      Decision d = async.get(5, TimeUnit.SECONDS);
      assertThat(d.allowed()).isFalse();
      backend.releaseHeld(); // the backend answers "allowed", too late
      assertThat(async.get()).isSameAs(d);
      assertThat(events.outcomes).containsExactly(Outcome.FAILURE_DENIED);
      assertThat(events.calls).containsExactly(false);
    }
  }

  @ParameterizedTest
  @EnumSource(FailureMode.class)
  @Timeout(10)
  void anInterruptedCallerStillGetsTheBackendsAnswerAndKeepsItsInterrupt(FailureMode mode) throws Exception {
    backend.mode = Mode.HANG;
    Thread caller = Thread.currentThread();
    java.util.concurrent.atomic.AtomicBoolean returned = new java.util.concurrent.atomic.AtomicBoolean();
    Thread answering = new Thread(() -> {
      // answers once the caller waits for it (parked, its interrupt already taken): the interrupt
      // has then been seen; a caller that gave up at the interrupt returns instead, unanswered
      while (!returned.get() && (backend.held.isEmpty() || caller.getState() != Thread.State.TIMED_WAITING)) {
        Thread.onSpinWait();
      }
      backend.releaseHeld();
    });
    answering.start();
    try (RateLimiter limiter = builder(mode).timeout(Duration.ofSeconds(30)).build()) {
      Thread.currentThread().interrupt();
      Decision d = limiter.check("k", policy);
      returned.set(true);
      assertThat(Thread.interrupted()).as("the interrupt is kept").isTrue();
      // the call was sent and counted: its answer, not the failure mode's (FAIL_CLOSED would deny a
      // counted check, LOCAL_FALLBACK count it a second time)
      assertThat(d.isDegraded()).isFalse();
      assertThat(d.allowed()).isTrue();
      assertThat(d.remaining()).isEqualTo(1);
      assertThat(backend.checkCalls).hasValue(1);
      assertThat(events.errors).isEmpty();
      assertThat(events.outcomes).containsExactly(Outcome.ALLOWED);
      backend.mode = Mode.OK;
      assertThat(limiter.check("k", policy).remaining()).as("counted once, in the backend").isZero();
    } finally {
      answering.join();
    }
  }

  @Test
  @Timeout(10)
  void anInterruptedCallerWaitsNoLongerThanTheTimeout() {
    backend.mode = Mode.HANG;
    try (RateLimiter limiter = builder(FailureMode.FAIL_CLOSED).build()) {
      Thread.currentThread().interrupt();
      Decision d = limiter.check("k", policy);
      assertThat(Thread.interrupted()).as("the interrupt is kept").isTrue();
      assertFailureDecision(d, FailureMode.FAIL_CLOSED);
      assertThat(events.errors).singleElement().isInstanceOf(TimeoutException.class);
    }
  }

  // ---------------------------------------------------------------- errors never escape

  @ParameterizedTest
  @EnumSource(value = Mode.class, names = {"THROW", "FAIL_STAGE", "NULL"})
  void noBackendErrorEscapes(Mode failure) throws Exception {
    backend.mode = failure;
    try (RateLimiter limiter = builder(FailureMode.FAIL_CLOSED).circuitBreaker(0, Duration.ZERO)
        .failClosedRetryAfter(Duration.ofSeconds(3)).build()) {
      Decision d = limiter.check("k", policy);
      assertThat(d.allowed()).isFalse();
      assertThat(d.remaining()).isEqualTo(-1);
      assertThat(d.retryAfter()).isEqualTo(Duration.ofSeconds(3));
      assertThat(d.resetAfter()).isEqualTo(Duration.ofSeconds(3));
      MultiDecision m = limiter.checkAll("k", List.of(policy, other), 1);
      assertThat(m.allowed()).isFalse();
      assertThat(m.decisions()).extracting(Decision::retryAfter).containsOnly(Duration.ofSeconds(3));
      Decision async = limiter.checkAsync("k", policy, 1).toCompletableFuture().get(5, TimeUnit.SECONDS);
      assertThat(async.allowed()).isFalse();
      assertThat(async.isDegraded()).isTrue();
    }
    assertThat(events.errors).hasSize(3);
    if (failure == Mode.NULL) {
      assertThat(events.errors).allSatisfy(e -> assertThat(e).hasMessageContaining("null"));
    } else {
      assertThat(events.errors).as("the backend's own exception, unwrapped").allSatisfy(e ->
          assertThat(e).isSameAs(ControllableBackend.DOWN));
    }
    assertThat(events.outcomes).containsExactly(Outcome.FAILURE_DENIED, Outcome.FAILURE_DENIED,
        Outcome.FAILURE_DENIED, Outcome.FAILURE_DENIED);
  }

  @Test
  void inspectAndResetThrowTheBackendsException() {
    backend.mode = Mode.THROW;
    try (RateLimiter limiter = builder(FailureMode.FAIL_OPEN).build()) {
      assertThatThrownBy(() -> limiter.inspect("k", policy)).isSameAs(ControllableBackend.DOWN);
      assertThatThrownBy(() -> limiter.reset("k", policy)).isSameAs(ControllableBackend.DOWN);
      assertThat(events.calls).as("not guarded: no backend-call report").isEmpty();
    }
  }

  // ---------------------------------------------------------------- outcomes and listeners

  @Test
  void everyPolicyOfEveryDecisionIsReported() {
    try (RateLimiter limiter = builder(FailureMode.FAIL_OPEN).build()) {
      limiter.check("k", policy);
      limiter.check("k", policy);
      limiter.check("k", policy); // denied
      limiter.checkAll("j", List.of(policy, other), 2); // both allowed
      limiter.checkAll("j", List.of(policy, other), 1); // api denies, other alone would pass
      assertThat(events.decisions).containsExactly("api:ALLOWED", "api:ALLOWED", "api:DENIED",
          "api:ALLOWED", "other:ALLOWED", "api:DENIED", "other:ALLOWED");
      assertThat(events.calls).containsExactly(true, true, true, true, true);
      assertThat(events.errors).isEmpty();
      backend.mode = Mode.THROW;
      limiter.check("k", policy);
      limiter.checkAll("j", List.of(policy, other), 1);
      assertThat(events.outcomes.subList(7, 10)).containsExactly(
          Outcome.FAILURE_ALLOWED, Outcome.FAILURE_ALLOWED, Outcome.FAILURE_ALLOWED);
      assertThat(events.calls.subList(5, 7)).containsExactly(false, false);
    }
  }

  @Test
  void severalListenersAreAllCalledAndOneThatThrowsStopsNothing() {
    List<String> order = new ArrayList<>();
    RateLimitListener first = new RateLimitListener() {
      @Override
      public void onDecision(Policy p, Outcome outcome) {
        order.add("first");
        throw new IllegalStateException("listener bug");
      }
    };
    RateLimitListener second = new RateLimitListener() {
      @Override
      public void onDecision(Policy p, Outcome outcome) {
        order.add("second");
      }
    };
    try (RateLimiter limiter = builder(FailureMode.FAIL_OPEN).listener(first).listener(second).build()) {
      assertThat(limiter.check("k", policy).allowed()).isTrue();
      assertThat(limiter.check("k", policy).allowed()).isTrue();
    }
    assertThat(order).containsExactly("first", "second", "first", "second");
    assertThat(events.outcomes).containsExactly(Outcome.ALLOWED, Outcome.ALLOWED);
    assertThat(log.lines(Level.WARNING)).hasSize(1)
        .allSatisfy(line -> assertThat(line).contains("threw"));
  }

  @Test
  void errorsAreLoggedAtMostOnceEveryTenSecondsWithACountOfTheRest() {
    backend.mode = Mode.THROW;
    try (RateLimiter limiter = builder(FailureMode.FAIL_OPEN).circuitBreaker(0, Duration.ZERO).build()) {
      for (int i = 0; i < 25; i++) {
        limiter.check("k", policy);
      }
      assertThat(events.errors).as("every error reaches the listener").hasSize(25);
      assertThat(errorLines()).hasSize(1);
      assertThat(errorLines().get(0)).contains("FAIL_OPEN decides", "backend down")
          .doesNotContain("more since");
      nanos.addAndGet(TimeUnit.SECONDS.toNanos(10) - 1);
      limiter.check("k", policy);
      assertThat(errorLines()).hasSize(1);
      nanos.addAndGet(1);
      limiter.check("k", policy);
      assertThat(errorLines()).hasSize(2);
      assertThat(errorLines().get(1)).contains("(25 more since the last line)");
    }
  }

  /** The backend-error lines (the failure mode's share has its own, once a minute). */
  private List<String> errorLines() {
    return log.lines(Level.WARNING).stream().filter(l -> l.startsWith("the rate limiter's backend failed")).toList();
  }

  /** The builder of docs/failure-handling.md (on a backend that is down rather than Redis: DocsRedisExamplesTest runs it as written). */
  @Test
  void theReadmesExampleWorksAsWritten() {
    RateLimitListener metrics = events;
    backend.mode = Mode.THROW;
    try (RateLimiter limiter = RateLimiter.builder()
        .backend(backend)
        .timeout(Duration.ofMillis(150))
        .failureMode(FailureMode.LOCAL_FALLBACK)
        .localFallbackShare(0.25)
        .failClosedRetryAfter(Duration.ofSeconds(1))
        .circuitBreaker(5, Duration.ofSeconds(5))
        .shadowPolicies(java.util.Set.of("login-v2"))
        .listener(metrics)
        .build()) {
      Policy api = Policy.of(8, Duration.ofMinutes(1)).withName("api");
      Policy login = Policy.of(1, Duration.ofMinutes(1)).withName("login-v2");
      int admitted = 0;
      for (int i = 0; i < 10; i++) {
        admitted += limiter.check("k", api).allowed() ? 1 : 0;
      }
      assertThat(admitted).as("a quarter of 8, locally").isEqualTo(2);
      assertThat(limiter.check("k", login).allowed()).isTrue();
      assertThat(limiter.check("k", login).allowed()).as("shadow: never blocks").isTrue();
      assertThat(events.outcomes).endsWith(Outcome.FALLBACK_ALLOWED, Outcome.SHADOW_DENIED);
      assertThat(events.transitions).containsExactly("CLOSED->OPEN");
    }
  }

  // ---------------------------------------------------------------- builder validation

  @Test
  void theBuilderRefusesBadValuesNamingThem() {
    RateLimiter.Builder b = RateLimiter.builder();
    assertThatThrownBy(() -> b.timeout(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("timeout must be positive, was PT0S");
    assertThatThrownBy(() -> b.timeout(Duration.ofMillis(-5))).hasMessageContaining("PT-0.005S");
    assertThatThrownBy(() -> b.timeout(null)).hasMessageContaining("null");
    assertThatThrownBy(() -> b.timeout(java.time.temporal.ChronoUnit.FOREVER.getDuration()))
        .as("longer would overflow the nanosecond timers").isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("timeout must be at most a day");
    assertThatThrownBy(() -> b.circuitBreaker(3, Duration.ofDays(400))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("coolDown must be at most a day").hasMessageContaining("PT9600H");
    b.timeout(Duration.ofDays(1)).build().close();
    assertThatThrownBy(() -> b.failClosedRetryAfter(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("failClosedRetryAfter must be positive, was PT0S");
    assertThatThrownBy(() -> b.localFallbackShare(0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("localFallbackShare must be in (0, 1], was 0.0");
    assertThatThrownBy(() -> b.localFallbackShare(1.5)).hasMessageContaining("1.5");
    assertThatThrownBy(() -> b.localFallbackShare(Double.NaN)).hasMessageContaining("NaN");
    assertThatThrownBy(() -> b.circuitBreaker(-1, Duration.ofSeconds(5))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("failureThreshold must be at least 0").hasMessageContaining("-1");
    assertThatThrownBy(() -> b.circuitBreaker(3, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("coolDown must be positive, was PT0S");
    assertThatThrownBy(() -> b.shadowPolicies(java.util.Set.of(" "))).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("' '");
    b.circuitBreaker(0, null); // disabled: the cool-down is not used
  }

  @Test
  void defaultsAreAsDocumented() {
    assertThat(RateLimiter.Builder.DEFAULT_TIMEOUT).isEqualTo(Duration.ofMillis(250));
    assertThat(RateLimiter.Builder.DEFAULT_FAIL_CLOSED_RETRY_AFTER).isEqualTo(Duration.ofSeconds(1));
    assertThat(RateLimiter.Builder.DEFAULT_FAILURE_THRESHOLD).isEqualTo(5);
    assertThat(RateLimiter.Builder.DEFAULT_COOL_DOWN).isEqualTo(Duration.ofSeconds(5));
    backend.mode = Mode.THROW;
    try (RateLimiter limiter = RateLimiter.builder().backend(backend).listener(events).build()) {
      Decision d = limiter.check("k", policy);
      assertThat(d.isDegraded()).as("FAIL_OPEN by default").isTrue();
      assertThat(d.allowed()).isTrue();
      for (int i = 0; i < 4; i++) {
        limiter.check("k", policy);
      }
      assertThat(events.transitions).as("open after 5 failures in a row").containsExactly("CLOSED->OPEN");
    }
  }
}

package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.ControllableBackend.Mode;
import dev.ratelimit.RateLimitListener.CircuitState;
import dev.ratelimit.RateLimitListener.Outcome;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The circuit breaker, on a nanosecond source the test moves. */
class CircuitBreakerTest {
  private static final Duration COOL_DOWN = Duration.ofSeconds(5);
  private static final Duration FIRST_PROBE = Duration.ofMillis(100);

  private final ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
  private final ControllableBackend backend = new ControllableBackend();
  private final RecordingListener events = new RecordingListener();
  private final AtomicLong nanos = new AtomicLong(123_456_789L);
  private final Policy policy = Policy.of(100, Duration.ofSeconds(10)).withName("api");
  private final LogCapture log = new LogCapture();

  @AfterEach
  void closeLog() {
    backend.releaseHeld();
    log.close();
  }

  private RateLimiter limiter(int threshold) {
    return RateLimiter.builder().clock(clock).backend(backend).failureMode(FailureMode.FAIL_CLOSED)
        .circuitBreaker(threshold, COOL_DOWN).listener(events).nanoTime(nanos::get)
        .timeout(Duration.ofSeconds(30)).build();
  }

  private static CircuitState state(RateLimiter limiter) {
    return ((DefaultRateLimiter) limiter).breaker().state();
  }

  private void advance(Duration d) {
    nanos.addAndGet(d.toNanos());
  }

  /** Opens the circuit of a threshold-1 limiter, lets the cool-down pass and starts a probe that hangs. */
  private CompletableFuture<Decision> slowProbe(RateLimiter limiter) {
    backend.mode = Mode.THROW;
    limiter.check("k", policy);
    assertThat(state(limiter)).isEqualTo(CircuitState.OPEN);
    advance(COOL_DOWN);
    backend.mode = Mode.HANG; // the probe is slow
    CompletableFuture<Decision> probe = limiter.checkAsync("k", policy, 1).toCompletableFuture();
    assertThat(state(limiter)).isEqualTo(CircuitState.HALF_OPEN);
    return probe;
  }

  /** One Redis Cluster slot moving to a node the client does not know yet: the other keys keep their backend. */
  @Test
  void callsTheBackendCouldNotRouteAreDecidedByTheFailureModeAndNeverOpenTheCircuit() {
    try (RateLimiter limiter = limiter(3)) {
      backend.mode = Mode.NOT_ROUTED;
      for (int i = 0; i < 10; i++) {
        assertThat(limiter.check("k", policy).isDegraded()).isTrue();
        assertThat(limiter.checkAll("k", List.of(policy, policy.withName("other")), 1).decisions())
            .allMatch(Decision::isDegraded);
      }
      assertThat(state(limiter)).isEqualTo(CircuitState.CLOSED);
      assertThat(events.transitions).isEmpty();
      assertThat(events.errors).as("each still reported as a backend error").hasSize(20);

      backend.mode = Mode.OK;
      assertThat(limiter.check("other-key", policy).isDegraded()).as("the next call reaches the backend").isFalse();
      assertThat(backend.checkCalls).hasValue(11);

      backend.mode = Mode.THROW; // and real failures still count from zero
      for (int i = 0; i < 3; i++) {
        limiter.check("k", policy);
      }
      assertThat(state(limiter)).isEqualTo(CircuitState.OPEN);
    }
  }

  @Test
  void opensAfterNFailuresInARowSkipsTheBackendThenProbesAndCloses() {
    try (RateLimiter limiter = limiter(3)) {
      backend.mode = Mode.THROW;
      for (int i = 0; i < 3; i++) {
        assertThat(limiter.check("k", policy).isDegraded()).isTrue();
      }
      assertThat(state(limiter)).isEqualTo(CircuitState.OPEN);
      assertThat(events.transitions).containsExactly("CLOSED->OPEN");
      assertThat(backend.checkCalls).hasValue(3);

      backend.mode = Mode.OK; // back, but the circuit does not know yet
      for (int i = 0; i < 10; i++) {
        Decision d = limiter.check("k", policy);
        assertThat(d.allowed()).isFalse();
        assertThat(d.isDegraded()).isTrue();
      }
      assertThat(limiter.checkAll("k", List.of(policy), 1).allowed()).isFalse();
      assertThat(backend.checkCalls).as("skipped while open").hasValue(3);
      assertThat(backend.checkAllCalls).hasValue(0);
      assertThat(events.calls).as("skipped calls are not backend calls").hasSize(3);
      assertThat(events.errors).hasSize(3);

      advance(FIRST_PROBE.minusNanos(1));
      limiter.check("k", policy);
      assertThat(backend.checkCalls).as("still open 1 ns before the first probe is due").hasValue(3);

      backend.mode = Mode.THROW;
      advance(Duration.ofNanos(1));
      assertThat(limiter.check("k", policy).isDegraded()).isTrue();
      assertThat(backend.checkCalls).as("one probe").hasValue(4);
      assertThat(state(limiter)).isEqualTo(CircuitState.OPEN);
      assertThat(events.transitions).containsExactly("CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->OPEN");
      advance(FIRST_PROBE);
      limiter.check("k", policy);
      assertThat(backend.checkCalls).as("a failed probe opens it for twice as long").hasValue(4);

      backend.mode = Mode.OK;
      advance(COOL_DOWN);
      Decision probe = limiter.check("k", policy);
      assertThat(probe.isDegraded()).isFalse();
      assertThat(probe.remaining()).isEqualTo(99);
      assertThat(state(limiter)).isEqualTo(CircuitState.CLOSED);
      assertThat(events.transitions).containsExactly("CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->OPEN",
          "OPEN->HALF_OPEN", "HALF_OPEN->CLOSED");
      assertThat(limiter.check("k", policy).remaining()).isEqualTo(98);
      assertThat(backend.checkCalls).hasValue(6);
    }
  }

  /**
   * A quick Redis restart was decided by the failure mode for the whole fixed cool-down (FAIL_CLOSED
   * denied everything for 4 s after Redis answered): probes now start 100 ms into an outage and
   * wait twice as long after each failure, up to the cool-down; a closed circuit starts over.
   */
  @Test
  void probesStartAfter100msAndDoubleUpToTheCoolDownThenStartOverOnceClosed() {
    CircuitBreaker breaker = new CircuitBreaker(1, COOL_DOWN, nanos::get, RateLimitListener.NONE);
    breaker.onResult(breaker.tryAcquire(), false);
    assertThat(breaker.state()).isEqualTo(CircuitState.OPEN);
    for (long millis : new long[] {100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000}) {
      advance(Duration.ofMillis(millis).minusNanos(1));
      assertThat(breaker.tryAcquire()).as("1 ns before the probe due %s ms after the last", millis)
          .isEqualTo(CircuitBreaker.REFUSED);
      advance(Duration.ofNanos(1));
      long probe = breaker.tryAcquire();
      assertThat(probe).as("the probe due %s ms after the last", millis).isPositive();
      breaker.onResult(probe, false);
      assertThat(breaker.state()).isEqualTo(CircuitState.OPEN);
    }
    advance(COOL_DOWN);
    breaker.onResult(breaker.tryAcquire(), true);
    assertThat(breaker.state()).isEqualTo(CircuitState.CLOSED);

    breaker.onResult(breaker.tryAcquire(), false); // the next outage
    advance(FIRST_PROBE.minusNanos(1));
    assertThat(breaker.tryAcquire()).isEqualTo(CircuitBreaker.REFUSED);
    advance(Duration.ofNanos(1));
    assertThat(breaker.tryAcquire()).as("100 ms again, not the last interval").isPositive();
  }

  @Test
  void aCoolDownShorterThanTheFirstProbeIntervalIsEveryInterval() {
    CircuitBreaker breaker = new CircuitBreaker(1, Duration.ofMillis(30), nanos::get, RateLimitListener.NONE);
    breaker.onResult(breaker.tryAcquire(), false);
    for (int i = 0; i < 3; i++) {
      advance(Duration.ofMillis(30).minusNanos(1));
      assertThat(breaker.tryAcquire()).isEqualTo(CircuitBreaker.REFUSED);
      advance(Duration.ofNanos(1));
      long probe = breaker.tryAcquire();
      assertThat(probe).isPositive();
      breaker.onResult(probe, false);
    }
  }

  @Test
  void theLimiterTellsItsCircuitState() {
    try (RateLimiter limiter = limiter(1)) {
      assertThat(limiter.circuitState()).isEqualTo(CircuitState.CLOSED);
      backend.mode = Mode.THROW;
      limiter.check("k", policy);
      assertThat(limiter.circuitState()).isEqualTo(CircuitState.OPEN);
      backend.mode = Mode.OK;
      advance(FIRST_PROBE);
      limiter.check("k", policy);
      assertThat(limiter.circuitState()).isEqualTo(CircuitState.CLOSED);
    }
  }

  @Test
  void onlyFailuresInARowCount() {
    try (RateLimiter limiter = limiter(3)) {
      for (int round = 0; round < 5; round++) {
        backend.next.add(Mode.THROW);
        backend.next.add(Mode.FAIL_STAGE);
        limiter.check("k", policy);
        limiter.check("k", policy);
        limiter.check("k", policy); // succeeds: the count starts over
      }
      assertThat(state(limiter)).isEqualTo(CircuitState.CLOSED);
      assertThat(events.transitions).isEmpty();
      assertThat(events.errors).hasSize(10);
    }
  }

  @Test
  void timeoutsCountAsFailures() {
    try (RateLimiter limiter = RateLimiter.builder().backend(backend).circuitBreaker(2, COOL_DOWN)
        .listener(events).nanoTime(nanos::get).timeout(Duration.ofMillis(20)).build()) {
      backend.mode = Mode.HANG;
      limiter.check("k", policy);
      limiter.check("k", policy);
      assertThat(state(limiter)).isEqualTo(CircuitState.OPEN);
    }
  }

  @Test
  @Timeout(10)
  void halfOpenLetsOneProbeThroughAtATime() throws Exception {
    try (RateLimiter limiter = limiter(1)) {
      CompletableFuture<Decision> probe = slowProbe(limiter);
      assertThat(probe).isNotDone();
      backend.mode = Mode.OK;
      for (int i = 0; i < 5; i++) {
        Decision other = limiter.check("k", policy);
        assertThat(other.isDegraded()).as("refused while the probe runs").isTrue();
      }
      assertThat(backend.checkCalls).hasValue(2);
      backend.releaseHeld();
      Decision d = probe.get(5, TimeUnit.SECONDS);
      assertThat(d.isDegraded()).isFalse();
      assertThat(d.remaining()).isEqualTo(99);
      assertThat(state(limiter)).isEqualTo(CircuitState.CLOSED);
      assertThat(limiter.check("k", policy).remaining()).isEqualTo(98);
    }
  }

  @Test
  @Timeout(10)
  void aProbeWhoseCallerGaveUpStillReportsItsAnswer() throws Exception {
    try (RateLimiter limiter = limiter(1)) {
      CompletableFuture<Decision> probe = slowProbe(limiter);
      probe.cancel(false); // the caller gives up (a reactive cancel, an orTimeout of its own)
      backend.mode = Mode.OK;
      backend.releaseHeld(); // the backend answers after all
      assertThat(state(limiter)).as("the answer still reached the breaker").isEqualTo(CircuitState.CLOSED);
      assertThat(limiter.check("k", policy).isDegraded()).isFalse();
    }
  }

  @Test
  void aProbeThatNeverReportsIsReplacedAfterACoolDown() {
    // A sync probe that times out would report; a lost permit is simulated on the breaker itself.
    RecordingListener l = new RecordingListener();
    CircuitBreaker breaker = new CircuitBreaker(1, COOL_DOWN, nanos::get, l);
    assertThat(breaker.tryAcquire()).isEqualTo(CircuitBreaker.CALL);
    breaker.onResult(CircuitBreaker.CALL, false);
    advance(COOL_DOWN);
    long lost = breaker.tryAcquire();
    assertThat(lost).isPositive();
    assertThat(breaker.tryAcquire()).isEqualTo(CircuitBreaker.REFUSED);
    advance(COOL_DOWN.minusNanos(1));
    assertThat(breaker.tryAcquire()).isEqualTo(CircuitBreaker.REFUSED);
    advance(Duration.ofNanos(1));
    long second = breaker.tryAcquire();
    assertThat(second).isPositive().isNotEqualTo(lost);
    breaker.onResult(lost, false); // the replaced probe's late answer is ignored
    assertThat(breaker.state()).isEqualTo(CircuitState.HALF_OPEN);
    breaker.onResult(second, true);
    assertThat(breaker.state()).isEqualTo(CircuitState.CLOSED);
    breaker.onResult(CircuitBreaker.CALL, true);
    assertThat(l.transitions).containsExactly("CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->CLOSED");
  }

  @Test
  void callsStartedWhileClosedDoNotDecideOnceOpen() {
    CircuitBreaker breaker = new CircuitBreaker(2, COOL_DOWN, nanos::get, RateLimitListener.NONE);
    long a = breaker.tryAcquire();
    long b = breaker.tryAcquire();
    long c = breaker.tryAcquire();
    breaker.onResult(a, false);
    breaker.onResult(b, false);
    assertThat(breaker.state()).isEqualTo(CircuitState.OPEN);
    breaker.onResult(c, true); // a straggler's success says nothing about now
    assertThat(breaker.state()).isEqualTo(CircuitState.OPEN);
    assertThat(breaker.tryAcquire()).isEqualTo(CircuitBreaker.REFUSED);
  }

  @Test
  void theCoolDownIsRealTimeNotTheLimitersClock() {
    try (RateLimiter limiter = limiter(1)) {
      backend.mode = Mode.THROW;
      limiter.check("k", policy);
      backend.mode = Mode.OK;
      clock.advance(Duration.ofHours(1));
      assertThat(limiter.check("k", policy).isDegraded()).isTrue();
      assertThat(backend.checkCalls).hasValue(1);
      advance(COOL_DOWN);
      assertThat(limiter.check("k", policy).isDegraded()).isFalse();
    }
  }

  @Test
  void thresholdZeroDisablesIt() {
    try (RateLimiter limiter = limiter(0)) {
      backend.mode = Mode.THROW;
      for (int i = 0; i < 100; i++) {
        limiter.check("k", policy);
      }
      assertThat(backend.checkCalls).hasValue(100);
      assertThat(events.transitions).isEmpty();
      assertThat(state(limiter)).isEqualTo(CircuitState.CLOSED);
      backend.mode = Mode.OK;
      assertThat(limiter.check("k", policy).isDegraded()).isFalse();
    }
  }

  @Test
  void openCircuitWithLocalFallbackDecidesLocally() {
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(backend)
        .failureMode(FailureMode.LOCAL_FALLBACK).circuitBreaker(1, COOL_DOWN).listener(events)
        .nanoTime(nanos::get).build()) {
      backend.mode = Mode.THROW;
      limiter.check("k", policy);
      events.clear();
      Decision d = limiter.check("k", policy);
      assertThat(d.isDegraded()).isFalse();
      assertThat(d.remaining()).as("the second local unit").isEqualTo(98);
      assertThat(events.outcomes).containsExactly(Outcome.FALLBACK_ALLOWED);
      assertThat(events.calls).as("the backend was skipped").isEmpty();
    }
  }
}

package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.ControllableBackend.Mode;
import dev.ratelimit.RateLimitListener.Outcome;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** LOCAL_FALLBACK: real local decisions while the backend is down, on this instance's share. */
class LocalFallbackTest {
  private final ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
  private final ControllableBackend backend = new ControllableBackend();
  private final RecordingListener events = new RecordingListener();
  private final LogCapture log = new LogCapture();

  @AfterEach
  void closeLog() {
    log.close();
  }

  private RateLimiter limiter(double share) {
    backend.mode = Mode.THROW;
    return RateLimiter.builder().clock(clock).backend(backend).failureMode(FailureMode.LOCAL_FALLBACK)
        .localFallbackShare(share).failClosedRetryAfter(Duration.ofSeconds(2)).circuitBreaker(0, null)
        .listener(events).build();
  }

  private static long admitted(RateLimiter limiter, String key, Policy policy) {
    long n = 0;
    for (int i = 0; i < 1_000 && limiter.check(key, policy).allowed(); i++) {
      n++;
    }
    return n;
  }

  @Test
  void theFullLimitByDefault() {
    Policy p = Policy.of(10, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW).withName("api");
    try (RateLimiter limiter = limiter(1.0)) {
      assertThat(admitted(limiter, "k", p)).isEqualTo(10);
    }
  }

  @Test
  void eachLimitAndBurstIsScaledByTheShareRoundedUp() {
    Policy window = Policy.of(10, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW).withName("window");
    Policy bucket = Policy.of(10, Duration.ofMinutes(1), Algorithm.TOKEN_BUCKET).withBurst(4).withName("bucket");
    Policy tiny = Policy.of(3, Duration.ofMinutes(1), Algorithm.SLIDING_LOG).withName("tiny");
    try (RateLimiter limiter = limiter(0.25)) {
      assertThat(admitted(limiter, "k", window)).as("ceil(10 × 0.25)").isEqualTo(3);
      assertThat(admitted(limiter, "k", bucket)).as("burst ceil(4 × 0.25)").isEqualTo(1);
      assertThat(admitted(limiter, "k", tiny)).as("at least 1").isEqualTo(1);
    }
    try (RateLimiter limiter = limiter(0.5)) {
      assertThat(admitted(limiter, "k", bucket)).as("burst 2 at once").isEqualTo(2);
      clock.advance(Duration.ofSeconds(12)); // refill of the scaled rate, 5 per minute: 1 token
      assertThat(admitted(limiter, "k", bucket)).isEqualTo(1);
    }
  }

  @Test
  void fallbackDecisionsAreRealNotDegradedAndCarryTheCallersPolicy() {
    Policy p = Policy.of(10, Duration.ofMinutes(1)).withName("api");
    try (RateLimiter limiter = limiter(0.2)) {
      Decision first = limiter.check("k", p);
      assertThat(first.allowed()).isTrue();
      assertThat(first.isDegraded()).isFalse();
      assertThat(first.remaining()).as("of the local share of 2").isEqualTo(1);
      assertThat(first.policy()).isSameAs(p);
      limiter.check("k", p);
      Decision denied = limiter.check("k", p);
      assertThat(denied.allowed()).isFalse();
      assertThat(denied.isDegraded()).isFalse();
      assertThat(denied.retryAfter()).as("GCRA at 2 per minute: one unit in 30 s").isEqualTo(Duration.ofSeconds(30));
      assertThat(events.outcomes).containsExactly(Outcome.FALLBACK_ALLOWED, Outcome.FALLBACK_ALLOWED,
          Outcome.FALLBACK_DENIED);
    }
  }

  @Test
  void aCostAboveTheScaledCapacityIsDeniedNotAnException() {
    Policy p = Policy.of(10, Duration.ofMinutes(1)).withName("api");
    Policy other = Policy.of(100, Duration.ofMinutes(1)).withName("other");
    try (RateLimiter limiter = limiter(0.2)) {
      Decision d = limiter.check("k", p, 5);
      assertThat(d.allowed()).isFalse();
      assertThat(d.isDegraded()).isFalse();
      assertThat(d.retryAfter()).as("failClosedRetryAfter").isEqualTo(Duration.ofSeconds(2));
      assertThat(d.remaining()).as("all of the share is left").isEqualTo(2);
      MultiDecision m = limiter.checkAll("k", List.of(other, p), 5);
      assertThat(m.allowed()).isFalse();
      assertThat(m.limiting().policy()).isSameAs(p);
      assertThat(limiter.check("k", other, 20).remaining()).as("nothing consumed by the denial").isZero();
      assertThat(events.outcomes).containsExactly(Outcome.FALLBACK_DENIED, Outcome.FALLBACK_ALLOWED,
          Outcome.FALLBACK_DENIED, Outcome.FALLBACK_ALLOWED);
    }
  }

  @Test
  void checkAllIsAllOrNothingLocallyToo() {
    Policy a = Policy.of(2, Duration.ofMinutes(1)).withName("a");
    Policy b = Policy.of(3, Duration.ofMinutes(1)).withName("b");
    try (RateLimiter limiter = limiter(1.0)) {
      assertThat(limiter.checkAll("k", List.of(a, b), 1).allowed()).isTrue();
      assertThat(limiter.checkAll("k", List.of(a, b), 1).allowed()).isTrue();
      MultiDecision third = limiter.checkAll("k", List.of(a, b), 1);
      assertThat(third.allowed()).isFalse();
      assertThat(third.decisions()).extracting(Decision::isDegraded).containsOnly(false);
      assertThat(limiter.check("k", b).remaining()).as("b consumed twice, not three times").isZero();
    }
  }

  @Test
  void theBackendDecidesAgainOnceItIsBackAndResetClearsBoth() {
    Policy p = Policy.of(5, Duration.ofMinutes(1)).withName("api");
    try (RateLimiter limiter = limiter(1.0)) {
      assertThat(limiter.check("k", p, 3).remaining()).isEqualTo(2);
      backend.mode = Mode.OK;
      Decision d = limiter.check("k", p);
      assertThat(d.remaining()).as("the backend's own state").isEqualTo(4);
      assertThat(events.outcomes).containsExactly(Outcome.FALLBACK_ALLOWED, Outcome.ALLOWED);
      limiter.reset("k", p);
      backend.mode = Mode.THROW;
      assertThat(limiter.check("k", p).remaining()).as("the local state was reset too").isEqualTo(4);
    }
  }

  @Test
  void eachPolicyIsScaledOnceAndTheCopiesStayBounded() {
    LocalFallback fallback = new LocalFallback(0.5, Duration.ofSeconds(2));
    Policy p = Policy.of(10, Duration.ofMinutes(1)).withName("api");
    Policy scaled = fallback.scale(p);
    assertThat(scaled.limit()).isEqualTo(5);
    assertThat(scaled.name()).isEqualTo("api");
    assertThat(fallback.scale(p)).as("the kept copy, not a new one").isSameAs(scaled);
    assertThat(fallback.scale(Policy.of(10, Duration.ofMinutes(1)).withName("api")))
        .as("an equal policy built elsewhere").isSameAs(scaled);
    assertThat(fallback.scale(p.withLimit(20)).limit()).as("other numbers, another copy").isEqualTo(10);
    for (int i = 1; i <= 3 * LocalFallback.MAX_SCALED; i++) { // policies built per request
      assertThat(fallback.scale(Policy.of(i, Duration.ofMinutes(1))).limit()).isEqualTo((i + 1) / 2);
      assertThat(fallback.scaledPolicies()).isLessThanOrEqualTo(LocalFallback.MAX_SCALED);
    }
    assertThat(fallback.scale(p)).as("made again after the copies were dropped").isEqualTo(scaled);
    assertThat(new LocalFallback(1.0, Duration.ofSeconds(2)).scale(p)).as("the whole share: the policy itself")
        .isSameAs(p);
  }
}

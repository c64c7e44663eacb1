package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.ControllableBackend.Mode;
import dev.ratelimit.RateLimitListener.Outcome;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Shadow mode: evaluate and count, report would-be denials, never block. */
class ShadowModeTest {
  private final ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
  private final ControllableBackend backend = new ControllableBackend();
  private final RecordingListener events = new RecordingListener();
  private final AtomicLong nanos = new AtomicLong();
  private final LogCapture log = new LogCapture();

  private final Policy shadow = Policy.of(2, Duration.ofMinutes(1)).withName("new-limit");
  private final Policy enforced = Policy.of(10, Duration.ofMinutes(1)).withName("api");

  @AfterEach
  void closeLog() {
    log.close();
  }

  private RateLimiter.Builder builder() {
    return RateLimiter.builder().clock(clock).backend(backend).listener(events).nanoTime(nanos::get)
        .shadowPolicies(Set.of("new-limit"));
  }

  @Test
  void aShadowDenialIsAllowedWithTheBackendsNumbersAndCounted() {
    try (RateLimiter limiter = builder().build()) {
      limiter.check("k", shadow);
      limiter.check("k", shadow);
      Decision backendSays = limiter.inspect("k", shadow);
      Decision d = limiter.check("k", shadow);
      assertThat(d.allowed()).isTrue();
      assertThat(d.isDegraded()).isFalse();
      assertThat(d.remaining()).as("as the backend said").isZero();
      assertThat(d.retryAfter()).isZero();
      assertThat(d.delay()).isZero();
      assertThat(d.resetAfter()).isEqualTo(backendSays.resetAfter()).isPositive();
      assertThat(d.policy()).isSameAs(shadow);
      assertThat(events.outcomes).containsExactly(Outcome.ALLOWED, Outcome.ALLOWED, Outcome.SHADOW_DENIED);
      assertThat(backend.checkCalls).as("the backend check ran").hasValue(3);
      assertThat(limiter.inspect("k", shadow).remaining()).as("the two admitted were counted").isZero();
      Decision notShadow = limiter.check("k", shadow.withName("same-numbers"));
      assertThat(notShadow.allowed()).isTrue();
    }
  }

  @Test
  void enforcedPoliciesStillDeny() {
    Policy strict = Policy.of(1, Duration.ofMinutes(1)).withName("strict");
    try (RateLimiter limiter = builder().build()) {
      limiter.check("k", strict);
      Decision d = limiter.check("k", strict);
      assertThat(d.allowed()).isFalse();
      assertThat(d.retryAfter()).isPositive();
      assertThat(events.outcomes).containsExactly(Outcome.ALLOWED, Outcome.DENIED);
    }
  }

  @Test
  void globalShadowModeCoversEveryPolicy() {
    Policy strict = Policy.of(1, Duration.ofMinutes(1));
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(backend).listener(events)
        .shadow(true).build()) {
      limiter.check("k", strict);
      assertThat(limiter.check("k", strict).allowed()).isTrue();
      assertThat(limiter.checkAll("k", List.of(strict, enforced), 1).allowed()).isTrue();
      assertThat(events.outcomes).containsExactly(Outcome.ALLOWED, Outcome.SHADOW_DENIED,
          Outcome.SHADOW_DENIED, Outcome.ALLOWED);
      assertThat(backend.checkAllCalls).as("every policy is shadow: no second call").hasValue(1);
      assertThat(limiter.inspect("k", enforced).remaining())
          .as("a shadow denial in checkAll consumes nothing, as if it were enforced").isEqualTo(10);
    }
  }

  @Test
  void checkAllDeniedOnlyByAShadowPolicyIsCheckedAgainWithTheEnforcedOnes() {
    try (RateLimiter limiter = builder().build()) {
      limiter.checkAll("k", List.of(enforced, shadow), 2); // both allowed: api 8, new-limit 0
      MultiDecision m = limiter.checkAll("k", List.of(enforced, shadow), 1);
      assertThat(m.allowed()).isTrue();
      assertThat(backend.checkAllCalls).as("one more call with the enforced policy alone").hasValue(3);
      assertThat(m.decisions().get(0).remaining()).as("api consumed by the second call").isEqualTo(7);
      assertThat(m.decisions().get(1).allowed()).isTrue();
      assertThat(m.decisions().get(1).remaining()).isZero();
      assertThat(m.decisions().get(1).retryAfter()).isZero();
      assertThat(limiter.inspect("k", enforced).remaining()).isEqualTo(7);
      assertThat(events.decisions).containsExactly("api:ALLOWED", "new-limit:ALLOWED",
          "api:ALLOWED", "new-limit:SHADOW_DENIED");
    }
  }

  @Test
  void noSecondCallIsSentOnceTheTimeoutHasPassed() {
    try (RateLimiter limiter = builder().timeout(Duration.ofMillis(50)).build()) {
      limiter.checkAll("k", List.of(enforced, shadow), 2); // api 8, new-limit 0
      backend.slowMillis = 100; // real time: the timeout is measured on System.nanoTime
      backend.next.add(ControllableBackend.Mode.SLOW); // answers, but after the whole timeout
      MultiDecision m = limiter.checkAll("k", List.of(enforced, shadow), 1);
      assertThat(backend.checkAllCalls).as("the enforced policies' call was not sent").hasValue(2);
      assertThat(m.allowed()).as("FAIL_OPEN decided").isTrue();
      assertThat(m.decisions().get(0).isDegraded()).isTrue();
      assertThat(limiter.inspect("k", enforced).remaining()).as("nothing consumed by the failure mode's answer")
          .isEqualTo(8);
    }
  }

  @Test
  void checkAllDeniedByAnEnforcedPolicyStaysDeniedAndNamesIt() {
    Policy strict = Policy.of(1, Duration.ofMinutes(1)).withName("strict");
    Policy slowShadow = Policy.of(1, Duration.ofHours(1)).withName("new-limit");
    try (RateLimiter limiter = builder().build()) {
      limiter.checkAll("k", List.of(strict, slowShadow), 1);
      MultiDecision m = limiter.checkAll("k", List.of(strict, slowShadow), 1);
      assertThat(m.allowed()).isFalse();
      assertThat(m.limiting().policy()).as("never the shadow policy, though its wait is longer")
          .isSameAs(strict);
      assertThat(m.decisions().get(1).allowed()).isTrue();
      assertThat(backend.checkAllCalls).hasValue(2);
      assertThat(events.decisions.subList(2, 4)).containsExactly("strict:DENIED", "new-limit:SHADOW_DENIED");
    }
  }

  @Test
  void theEnforcedPoliciesSecondCallCanStillDenyOrFail() {
    try (RateLimiter limiter = builder().failureMode(FailureMode.FAIL_CLOSED).build()) {
      limiter.checkAll("k", List.of(enforced, shadow), 2);
      backend.next.add(Mode.OK);
      backend.next.add(Mode.THROW); // the second call fails: FAIL_CLOSED decides for api
      MultiDecision m = limiter.checkAll("k", List.of(enforced, shadow), 1);
      assertThat(m.allowed()).isFalse();
      assertThat(m.decisions().get(0).isDegraded()).isTrue();
      assertThat(m.decisions().get(1).allowed()).isTrue();
      assertThat(events.decisions.subList(2, 4)).containsExactly("api:FAILURE_DENIED", "new-limit:SHADOW_DENIED");
    }
  }

  @Test
  void aShadowPolicyNeverBlocksOnFailureEither() {
    backend.mode = Mode.THROW;
    try (RateLimiter limiter = builder().failureMode(FailureMode.FAIL_CLOSED).build()) {
      Decision d = limiter.check("k", shadow);
      assertThat(d.allowed()).isTrue();
      assertThat(d.isDegraded()).as("FAIL_OPEN's numbers: nothing known").isTrue();
      Decision e = limiter.check("k", enforced);
      assertThat(e.allowed()).isFalse();
      assertThat(events.outcomes).containsExactly(Outcome.SHADOW_DENIED, Outcome.FAILURE_DENIED);
    }
  }

  @Test
  void theLocalFallbackHonoursShadowModeAndChecksEnforcedPoliciesAgain() {
    backend.mode = Mode.THROW;
    try (RateLimiter limiter = builder().failureMode(FailureMode.LOCAL_FALLBACK).build()) {
      limiter.checkAll("k", List.of(enforced, shadow), 2);
      MultiDecision m = limiter.checkAll("k", List.of(enforced, shadow), 1);
      assertThat(m.allowed()).isTrue();
      assertThat(m.decisions().get(0).remaining()).as("counted locally").isEqualTo(7);
      assertThat(events.decisions).containsExactly("api:FALLBACK_ALLOWED", "new-limit:FALLBACK_ALLOWED",
          "api:FALLBACK_ALLOWED", "new-limit:SHADOW_DENIED");
    }
  }

  @Test
  void shadowDenialsAreLoggedAtMostOnceAMinutePerPolicy() {
    Policy other = Policy.of(1, Duration.ofMinutes(1)).withName("other-new");
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(backend).nanoTime(nanos::get)
        .shadowPolicies(Set.of("new-limit", "other-new")).build()) {
      for (int i = 0; i < 7; i++) {
        limiter.check("k", shadow); // 5 shadow denials
      }
      for (int i = 0; i < 4; i++) {
        limiter.check("k", other); // 3
      }
      assertThat(log.lines(Level.INFO)).containsExactly(
          "shadow policy 'new-limit' would have denied a request (logged at most once a minute per policy)",
          "shadow policy 'other-new' would have denied a request (logged at most once a minute per policy)");
      nanos.addAndGet(TimeUnit.MINUTES.toNanos(1));
      limiter.check("k", shadow);
      assertThat(log.lines(Level.INFO)).hasSize(3);
      assertThat(log.lines(Level.INFO).get(2)).contains("'new-limit'", "; 4 more since the last line");
      assertThat(log.lines(Level.WARNING)).isEmpty();
    }
  }
}

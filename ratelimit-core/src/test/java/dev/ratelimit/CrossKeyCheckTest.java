package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.ControllableBackend.Mode;
import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.spi.Command;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * checkAll of (key, policy) pairs of different keys through the limiter: the failure modes, the
 * timeout, the circuit breaker, the listener and shadow policies as checkAll(key, ...) has them,
 * and implementations without cross-key checks refusing clearly.
 */
class CrossKeyCheckTest {
  private final ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
  private final ControllableBackend backend = new ControllableBackend();
  private final RecordingListener events = new RecordingListener();
  private final Policy perUser = Policy.of(2, Duration.ofMinutes(1)).withName("user");
  private final Policy perTenant = Policy.of(1, Duration.ofMinutes(1)).withName("tenant");
  private final List<KeyedPolicy> checks = List.of(KeyedPolicy.of("user:1", perUser), KeyedPolicy.of("tenant:a", perTenant));

  @AfterEach
  void release() {
    backend.releaseHeld();
  }

  private RateLimiter.Builder builder(FailureMode mode) {
    return RateLimiter.builder().clock(clock).backend(backend).failureMode(mode).timeout(Duration.ofMillis(100))
        .listener(events);
  }

  @Test
  void theBackendDecidesInOneCallAndEveryPairIsReported() {
    try (RateLimiter limiter = builder(FailureMode.FAIL_CLOSED).build()) {
      assertThat(limiter.checkAll(checks, 1).allowed()).isTrue();
      MultiDecision denied = limiter.checkAll(checks, 1);
      assertThat(denied.allowed()).isFalse();
      assertThat(backend.acrossCalls).hasValue(2);
      assertThat(events.decisions).containsExactly("user:ALLOWED", "tenant:ALLOWED", "user:ALLOWED", "tenant:DENIED");
      assertThat(limiter.inspect("user:1", perUser).remaining()).as("the denial consumed nothing").isEqualTo(1);
      assertThat(events.calls).containsExactly(true, true);
    }
  }

  @Test
  void failOpenAllowsEveryPairWithoutCounting() {
    backend.mode = Mode.THROW;
    try (RateLimiter limiter = builder(FailureMode.FAIL_OPEN).build()) {
      MultiDecision open = limiter.checkAll(checks, 1);
      assertThat(open.allowed()).isTrue();
      assertThat(open.decisions()).extracting(Decision::remaining).containsExactly(-1L, -1L);
      assertThat(events.outcomes).containsOnly(RateLimitListener.Outcome.FAILURE_ALLOWED).hasSize(2);
      assertThat(events.errors).containsExactly(ControllableBackend.DOWN);
    }
  }

  @Test
  void failClosedDeniesEveryPair() {
    backend.mode = Mode.FAIL_STAGE;
    try (RateLimiter limiter = builder(FailureMode.FAIL_CLOSED).failClosedRetryAfter(Duration.ofSeconds(3)).build()) {
      MultiDecision closed = limiter.checkAllAsync(checks, 1).toCompletableFuture().join();
      assertThat(closed.allowed()).isFalse();
      assertThat(closed.decisions()).extracting(Decision::retryAfterMicros).containsExactly(3_000_000L, 3_000_000L);
      assertThat(events.outcomes).containsOnly(RateLimitListener.Outcome.FAILURE_DENIED).hasSize(2);
    }
  }

  /** The local fallback checks the pairs all or nothing across keys too. */
  @Test
  void theLocalFallbackIsAllOrNothingAcrossKeys() {
    backend.mode = Mode.THROW;
    try (RateLimiter limiter = builder(FailureMode.LOCAL_FALLBACK).build()) {
      assertThat(limiter.checkAll(checks, 1).allowed()).isTrue();
      MultiDecision denied = limiter.checkAll(checks, 1);
      assertThat(denied.allowed()).isFalse();
      assertThat(denied.decisions()).extracting(Decision::allowed).containsExactly(true, false);
      MultiDecision userAlone = limiter.checkAll(List.of(KeyedPolicy.of("user:1", perUser),
          KeyedPolicy.of("tenant:b", perTenant)), 1);
      assertThat(userAlone.allowed()).isTrue();
      assertThat(userAlone.decisions().get(0).remaining()).as("the denial consumed nothing locally").isZero();
      assertThat(events.outcomes).contains(RateLimitListener.Outcome.FALLBACK_DENIED);
    }
  }

  @Test
  @Timeout(value = 10, unit = TimeUnit.SECONDS)
  void aBackendThatHangsIsCutShortByTheTimeout() {
    backend.mode = Mode.HANG;
    try (RateLimiter limiter = builder(FailureMode.FAIL_CLOSED).build()) {
      assertThat(limiter.checkAll(checks, 1).allowed()).isFalse();
      CompletionStage<MultiDecision> async = limiter.checkAllAsync(checks, 1);
      assertThat(async.toCompletableFuture().join().decisions())
          .extracting(Decision::remaining).containsExactly(-1L, -1L);
      assertThat(events.errors).hasSize(2).allMatch(e -> e instanceof java.util.concurrent.TimeoutException);
    }
  }

  @Test
  void theOpenCircuitSkipsTheBackend() {
    backend.mode = Mode.THROW;
    try (RateLimiter limiter = builder(FailureMode.FAIL_CLOSED).circuitBreaker(2, Duration.ofMinutes(1)).build()) {
      limiter.checkAll(checks, 1);
      limiter.checkAll(checks, 1);
      assertThat(backend.acrossCalls).hasValue(2);
      assertThat(limiter.checkAll(checks, 1).allowed()).isFalse();
      assertThat(limiter.checkAllAsync(checks, 1).toCompletableFuture().join().allowed()).isFalse();
      assertThat(backend.acrossCalls).as("skipped while open").hasValue(2);
    }
  }

  /** Only a shadow pair denied: the enforced pairs are checked again alone, and consume once. */
  @Test
  void aShadowPairsDenialIsLetThroughAndTheOthersAreCheckedAgain() {
    try (RateLimiter limiter = builder(FailureMode.FAIL_CLOSED).shadowPolicies(Set.of("tenant")).build()) {
      assertThat(limiter.checkAll(checks, 1).allowed()).isTrue();
      MultiDecision second = limiter.checkAll(checks, 1);
      assertThat(second.allowed()).isTrue();
      assertThat(backend.acrossCalls).as("the second check, then its enforced pair again").hasValue(3);
      assertThat(second.decisions().get(1).allowed()).isTrue();
      assertThat(second.decisions().get(1).remaining()).isZero();
      assertThat(limiter.inspect("user:1", perUser).remaining()).as("consumed once per check").isZero();
      assertThat(events.outcomes).contains(RateLimitListener.Outcome.SHADOW_DENIED);
      assertThat(limiter.checkAllAsync(checks, 1).toCompletableFuture().join().allowed())
          .as("an enforced denial stands").isFalse();
    }
  }

  @Test
  void pairsOfOneKeyAreCheckAllOfThatKey() {
    try (RateLimiter limiter = builder(FailureMode.FAIL_CLOSED).build()) {
      MultiDecision one = limiter.checkAll(List.of(KeyedPolicy.of("k", perUser), KeyedPolicy.of("k", perTenant)), 1);
      assertThat(one.allowed()).isTrue();
      assertThat(backend.checkAllCalls).hasValue(1);
      assertThat(backend.acrossCalls).hasValue(0);
    }
  }

  /** A backend written before cross-key checks: pairs of one key work, others are refused before any call. */
  @Test
  void aBackendWithoutCrossKeyChecksRefusesPairsOfDifferentKeys() {
    InMemoryBackend memory = InMemoryBackend.create();
    Backend old = new Backend() { // checksAcrossKeys() keeps its default, false
      @Override
      public <R> R execute(Command<R> command) {
        if (command instanceof Command.CheckAcross) {
          throw new UnsupportedOperationException("no cross-key checks here");
        }
        return memory.execute(command);
      }
    };
    assertThat(old.checksAcrossKeys()).isFalse();
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(old).listener(events).build()) {
      assertThatThrownBy(() -> limiter.checkAll(checks, 1)).isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("checksAcrossKeys()");
      assertThatThrownBy(() -> limiter.checkAllAsync(checks, 1)).isInstanceOf(UnsupportedOperationException.class);
      assertThat(events.errors).as("not a backend failure").isEmpty();
      assertThat(limiter.checkAll(List.of(KeyedPolicy.of("j", perUser), KeyedPolicy.of("j", perTenant)), 1).allowed())
          .isTrue();
    }
  }

  /** Another RateLimiter implementation keeps the interface's defaults: one key works, several are refused. */
  @Test
  void theInterfaceDefaultsDelegateForOneKeyAndRefuseSeveral() {
    try (RateLimiter real = RateLimiter.builder().clock(clock).build()) {
      RateLimiter other = new RateLimiter() {
        @Override
        public Decision check(String key, Policy policy, long cost) {
          return real.check(key, policy, cost);
        }

        @Override
        public MultiDecision checkAll(String key, List<Policy> policies, long cost) {
          return real.checkAll(key, policies, cost);
        }

        @Override
        public CompletionStage<Decision> checkAsync(String key, Policy policy, long cost) {
          return real.checkAsync(key, policy, cost);
        }

        @Override
        public Decision inspect(String key, Policy policy) {
          return real.inspect(key, policy);
        }

        @Override
        public void reset(String key, Policy policy) {
          real.reset(key, policy);
        }

        @Override
        public void close() {}
      };
      assertThatThrownBy(() -> other.checkAll(checks, 1)).isInstanceOf(UnsupportedOperationException.class);
      assertThatThrownBy(() -> other.checkAllAsync(checks, 1)).isInstanceOf(UnsupportedOperationException.class);
      assertThatThrownBy(() -> other.checkAll(List.of(), 1)).isInstanceOf(IllegalArgumentException.class);
      List<KeyedPolicy> oneKey = List.of(KeyedPolicy.of("k", perUser), KeyedPolicy.of("k", perTenant));
      assertThat(other.checkAll(oneKey, 1).allowed()).isTrue();
      assertThat(other.checkAllAsync(oneKey, 1).toCompletableFuture().join().allowed()).as("tenant's 1 is used").isFalse();
    }
  }
}

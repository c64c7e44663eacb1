package dev.ratelimit.memory;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

class InMemoryBackendTest {
  private final ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));

  /** Each state is dropped at the moment it stops mattering, on the limiter's clock. */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void statesExpireWhenTheyStopMatteringOnTheManualClock(Algorithm algorithm) {
    InMemoryBackend backend = InMemoryBackend.create();
    Policy p = Policy.of(10, Duration.ofSeconds(10)).withAlgorithm(algorithm);
    Policy probe = Policy.of(10, Duration.ofSeconds(10)).withName("probe");
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(backend).build()) {
      long resetAfter = limiter.check("k", p, 3).resetAfter().toNanos() / 1_000;
      assertThat(backend.size()).isEqualTo(1);
      clock.advanceMicros(resetAfter - 1);
      limiter.inspect("other", probe); // moves the backend's view of the clock
      assertThat(backend.size()).as("1 µs before it stops mattering").isEqualTo(1);
      clock.advanceMicros(1);
      limiter.inspect("other", probe);
      assertThat(backend.size()).as("when it stops mattering").isZero();
    }
  }

  @Test
  void deniedChecksAndInspectionsStoreNothing() {
    InMemoryBackend backend = InMemoryBackend.create();
    Policy p = Policy.of(1, Duration.ofSeconds(10));
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(backend).build()) {
      limiter.inspect("a", p);
      assertThat(backend.size()).isZero();
      limiter.check("a", p);
      limiter.check("a", p);
      assertThat(backend.size()).isEqualTo(1);
    }
  }

  @Test
  void theNumberOfKeysIsBounded() {
    InMemoryBackend backend = InMemoryBackend.builder().maximumKeys(100).build();
    Policy p = Policy.of(5, Duration.ofHours(1));
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(backend).build()) {
      for (int i = 0; i < 10_000; i++) {
        limiter.check("key-" + i, p);
      }
      assertThat(backend.size()).isLessThanOrEqualTo(100);
    }
  }

  /**
   * A key's first state is its entry: resetting that state's policy while the key has another
   * makes it fresh in place (the other policy's state kept); once the key has no other state, the
   * reset drops the entry. Every algorithm as the first state, since each clears its own numbers.
   */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void resettingTheKeysFirstPolicyKeepsItsOtherPolicies(Algorithm algorithm) {
    InMemoryBackend backend = InMemoryBackend.create();
    Policy first = Policy.of(3, Duration.ofMinutes(1)).withAlgorithm(algorithm).withName("first");
    Policy second = Policy.of(2, Duration.ofMinutes(1)).withName("second");
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(backend).build()) {
      assertThat(limiter.check("k", first, 3).allowed()).isTrue();
      assertThat(limiter.check("k", second, 2).allowed()).isTrue();
      assertThat(backend.size()).isEqualTo(2);

      limiter.reset("k", first);
      assertThat(limiter.inspect("k", first).remaining()).as("first, reset").isEqualTo(3);
      assertThat(limiter.inspect("k", second).remaining()).as("second, kept").isZero();
      assertThat(backend.size()).isEqualTo(1);
      assertThat(limiter.check("k", first, 2).remaining()).as("first counts again from fresh").isEqualTo(1);
      assertThat(limiter.check("k", first, 2).allowed()).isFalse();

      limiter.reset("k", second);
      assertThat(limiter.inspect("k", second).remaining()).isEqualTo(2);
      assertThat(limiter.inspect("k", first).remaining()).as("first, kept").isEqualTo(1);
      limiter.reset("k", first);
      assertThat(backend.size()).isZero();
      assertThat(backend.indexes("k")).as("no state left: the entry is dropped").isFalse();
      assertThat(limiter.check("k", first, 3).allowed()).isTrue();
      assertThat(limiter.check("k", second, 2).allowed()).isTrue();
    }
  }

  /**
   * The other order: the key's first policy reset, then its other one. No state is left, so the
   * entry is dropped at once (not kept, vacant, until its expiry), and both policies start fresh.
   */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void resettingEveryPolicyOfAKeyDropsItsEntryInEitherOrder(Algorithm algorithm) {
    InMemoryBackend backend = InMemoryBackend.create();
    Policy first = Policy.of(3, Duration.ofMinutes(1)).withAlgorithm(algorithm).withName("first");
    Policy second = Policy.of(2, Duration.ofMinutes(1)).withAlgorithm(algorithm).withName("second");
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).backend(backend).build()) {
      limiter.check("k", first, 3);
      limiter.check("k", second, 2);
      limiter.reset("k", first);
      assertThat(backend.indexes("k")).as("the other policy's state is kept").isTrue();
      limiter.reset("k", second);
      assertThat(backend.indexes("k")).as("no state left: the entry is dropped").isFalse();
      assertThat(backend.size()).isZero();

      limiter.check("k", first, 3);
      limiter.check("k", second, 2);
      limiter.reset("k", first);
      limiter.check("k", first, 1); // the first policy counts again: its state is no longer vacant
      limiter.reset("k", second);
      assertThat(backend.indexes("k")).as("the first policy's state is kept").isTrue();
      assertThat(limiter.inspect("k", first).remaining()).isEqualTo(2);
      assertThat(limiter.inspect("k", second).remaining()).isEqualTo(2);
    }
  }
}

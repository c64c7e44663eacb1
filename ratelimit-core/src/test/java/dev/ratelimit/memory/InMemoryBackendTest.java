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
}

package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.spi.Backend;
import dev.ratelimit.spi.Command;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class FailureModeTest {
  private final Policy policy = Policy.of(2, Duration.ofSeconds(10));

  /** A backend whose every call fails, as an unreachable remote store would. */
  private static final class BrokenBackend implements Backend {
    @Override
    public <R> R execute(Command<R> command) {
      if (command instanceof Command.Reset) {
        return null;
      }
      throw new IllegalStateException("backend down");
    }
  }

  private RateLimiter limiter(FailureMode mode) {
    return RateLimiter.builder().backend(new BrokenBackend()).failureMode(mode).build();
  }

  @Test
  void failOpenAllowsWithoutInventingNumbers() throws Exception {
    try (RateLimiter limiter = limiter(FailureMode.FAIL_OPEN)) {
      Decision d = limiter.check("k", policy);
      assertThat(d.allowed()).isTrue();
      assertThat(d.isDegraded()).isTrue();
      assertThat(limiter.checkAsync("k", policy, 1).toCompletableFuture().get().allowed()).isTrue();
      assertThat(limiter.checkAll("k", List.of(policy), 1).allowed()).isTrue();
    }
  }

  @Test
  void failClosedDenies() {
    try (RateLimiter limiter = limiter(FailureMode.FAIL_CLOSED)) {
      Decision d = limiter.check("k", policy);
      assertThat(d.allowed()).isFalse();
      assertThat(d.isDegraded()).isTrue();
      assertThat(d.retryAfter()).isEqualTo(Duration.ofSeconds(1));
      assertThat(limiter.checkAll("k", List.of(policy), 1).allowed()).isFalse();
    }
  }

  @Test
  void localFallbackLimitsInMemory() {
    try (RateLimiter limiter = limiter(FailureMode.LOCAL_FALLBACK)) {
      assertThat(limiter.check("k", policy).allowed()).isTrue();
      assertThat(limiter.check("k", policy).allowed()).isTrue();
      Decision third = limiter.check("k", policy);
      assertThat(third.allowed()).isFalse();
      assertThat(third.isDegraded()).isFalse();
    }
  }
}

package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The README's quick start, as written there. */
class ReadmeQuickStartTest {
  @Test
  void quickStart() {
    RateLimiter limiter = RateLimiter.inMemory();
    Policy perUser = Policy.parse("100/1m");
    Policy uploads = Policy.of(10, Duration.ofHours(1), Algorithm.SLIDING_LOG).withName("uploads");

    Decision d = limiter.check("user:42", perUser);
    assertThat(d.allowed()).isTrue();
    assertThat(d.remaining()).isEqualTo(99);
    MultiDecision m = limiter.checkAll("user:42", List.of(perUser, uploads), 3);
    assertThat(m.allowed()).isTrue();
    assertThat(m.limiting().policy()).isEqualTo(uploads);
    assertThat(m.limiting().remaining()).isEqualTo(7);
    boolean ok = limiter.tryAcquire("user:7", perUser);
    assertThat(ok).isTrue();
    assertThat(limiter.inspect("user:7", perUser).remaining()).isEqualTo(99);
    limiter.close();
  }
}

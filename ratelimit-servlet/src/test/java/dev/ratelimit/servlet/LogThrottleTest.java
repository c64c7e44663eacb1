package dev.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LogThrottleTest {
  @Test
  void oneLinePerTopicPerInterval() {
    AtomicLong nanos = new AtomicLong(-5); // any start, negative too
    LogThrottle throttle = new LogThrottle(nanos::get, 1, TimeUnit.MINUTES);
    assertThat(throttle.tryAcquire("a")).isTrue();
    assertThat(throttle.tryAcquire("a")).isFalse();
    assertThat(throttle.tryAcquire("b")).isTrue();
    nanos.addAndGet(TimeUnit.SECONDS.toNanos(60) - 1);
    assertThat(throttle.tryAcquire("a")).isFalse();
    nanos.incrementAndGet();
    assertThat(throttle.tryAcquire("a")).isTrue();
    assertThat(throttle.tryAcquire("a")).isFalse();
  }

  @Test
  void sanitizeKeepsLogLinesOnOneLineAndShort() {
    assertThat(LogThrottle.sanitize("a\nb\rc\u0000")).isEqualTo("a?b?c?");
    assertThat(LogThrottle.sanitize("x".repeat(100))).isEqualTo("x".repeat(64) + "...");
    assertThat(LogThrottle.sanitize(null)).isEqualTo("null");
  }
}

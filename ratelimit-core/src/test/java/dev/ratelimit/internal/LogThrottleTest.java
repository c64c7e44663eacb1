package dev.ratelimit.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LogThrottleTest {
  private static final long MINUTE = TimeUnit.MINUTES.toNanos(1);

  @Test
  void oneLinePerTopicPerIntervalCountingTheLinesLeftOut() {
    AtomicLong nanos = new AtomicLong(-5); // any start, negative too
    LogThrottle throttle = new LogThrottle(nanos::get, MINUTE);
    assertThat(throttle.tryAcquire("a")).isZero();
    assertThat(throttle.tryAcquire("a")).isEqualTo(-1);
    assertThat(throttle.tryAcquire("b")).as("another topic").isZero();
    nanos.addAndGet(MINUTE - 1);
    assertThat(throttle.tryAcquire("a")).isEqualTo(-1);
    nanos.incrementAndGet();
    assertThat(throttle.tryAcquire("a")).as("two left out since the last line").isEqualTo(2);
    assertThat(throttle.tryAcquire("a")).isEqualTo(-1);
  }

  @Test
  void pastTheBoundTheRestShareOneTopic() {
    LogThrottle throttle = new LogThrottle(() -> 0, MINUTE);
    for (int i = 0; i < LogThrottle.MAX_TOPICS; i++) {
      assertThat(throttle.tryAcquire("topic-" + i)).isZero();
    }
    assertThat(throttle.tryAcquire("one more")).isZero();
    assertThat(throttle.tryAcquire("and another")).as("shares the overflow topic").isEqualTo(-1);
  }

  @Test
  void warnLogsOnceAnIntervalAndSaysSo() {
    AtomicLong nanos = new AtomicLong();
    LogThrottle throttle = new LogThrottle(nanos::get, MINUTE);
    Lines log = new Lines();
    assertThat(throttle.warn(log, "t", "first")).isTrue();
    assertThat(throttle.warn(log, "t", "second")).isFalse();
    assertThat(throttle.warn(log, "t", "third")).isFalse();
    nanos.addAndGet(MINUTE);
    assertThat(throttle.warn(log, "t", "fourth")).isTrue();
    assertThat(log.lines).containsExactly("WARNING first (logged at most once a minute)",
        "WARNING fourth (2 more since the last line) (logged at most once a minute)");
    assertThat(new LogThrottle(nanos::get, TimeUnit.SECONDS.toNanos(10)).note(0))
        .isEqualTo(" (logged at most once every 10 s)");
  }

  @Test
  void sanitizeKeepsLogLinesOnOneLineAndShort() {
    assertThat(LogThrottle.sanitize("a\nb\rc\u0000")).isEqualTo("a?b?c?");
    assertThat(LogThrottle.sanitize("x".repeat(100))).isEqualTo("x".repeat(64) + "...");
    assertThat(LogThrottle.sanitize(null)).isEqualTo("null");
  }

  /** A logger that keeps its lines. */
  private static final class Lines implements System.Logger {
    final List<String> lines = new ArrayList<>();

    @Override
    public String getName() {
      return "lines";
    }

    @Override
    public boolean isLoggable(Level level) {
      return true;
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
      lines.add(level + " " + msg);
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String format, Object... params) {
      lines.add(level + " " + format);
    }
  }
}

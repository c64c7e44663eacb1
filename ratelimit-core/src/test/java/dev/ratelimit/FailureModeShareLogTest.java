package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.ControllableBackend.Mode;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * On a cold JVM 97 % of decisions came from FAIL_OPEN (timeouts opened the circuit, whose skipped
 * calls log nothing) and nothing said so: while the failure mode decides, the limiter says how many
 * of its decisions it made, at most once a minute, and stops once the backend decides again.
 */
class FailureModeShareLogTest {
  private static final String SHARE_LINE = "decisions (";

  private final ControllableBackend backend = new ControllableBackend();
  private final AtomicLong nanos = new AtomicLong(42_000_000_000L);
  private final Policy policy = Policy.of(1_000, Duration.ofMinutes(1)).withName("api");
  private final LogCapture log = new LogCapture();

  @AfterEach
  void close() {
    log.close();
  }

  private List<String> shareLines() {
    return log.lines(Level.WARNING).stream().filter(l -> l.contains(SHARE_LINE)).toList();
  }

  private void advance(Duration d) {
    nanos.addAndGet(d.toNanos());
  }

  @Test
  void theFailureModesShareIsLoggedAtMostOnceAMinuteWhileAboveZero() {
    try (RateLimiter limiter = RateLimiter.builder().clock(ManualClock.at(Instant.ofEpochSecond(1_700_000_000L)))
        .backend(backend).circuitBreaker(1, Duration.ofSeconds(5)).nanoTime(nanos::get).build()) {
      for (int i = 0; i < 9; i++) {
        limiter.check("k", policy);
      }
      assertThat(shareLines()).as("the backend decides: nothing to say").isEmpty();

      backend.mode = Mode.THROW;
      advance(Duration.ofSeconds(12));
      limiter.check("k", policy); // fails, opens the circuit
      assertThat(shareLines()).containsExactly("FAIL_OPEN made 1 of 10 decisions (10.0 %) since the limiter was "
          + "built, 12 s ago: the backend failed or was too slow, or the open circuit skipped it (circuit OPEN); "
          + "logged at most once a minute while the failure mode decides");

      for (int i = 0; i < 29; i++) {
        limiter.check("k", policy); // skipped by the open circuit
      }
      advance(Duration.ofSeconds(59));
      limiter.check("k", policy);
      assertThat(shareLines()).as("once a minute at most").hasSize(1);

      advance(Duration.ofSeconds(1));
      limiter.check("k", policy);
      assertThat(shareLines()).hasSize(2);
      assertThat(shareLines().get(1)).startsWith("FAIL_OPEN made 31 of 31 decisions (100.0 %) in the last 60 s");

      backend.mode = Mode.OK;
      advance(Duration.ofSeconds(5)); // the next probe closes the circuit
      for (int i = 0; i < 10; i++) {
        limiter.check("k", policy);
        advance(Duration.ofSeconds(30));
      }
      assertThat(limiter.circuitState()).isEqualTo(RateLimitListener.CircuitState.CLOSED);
      assertThat(shareLines()).as("the backend decides again: silent").hasSize(2);
    }
  }

  @Test
  void theLocalFallbackIsNamed() {
    try (RateLimiter limiter = RateLimiter.builder().backend(backend).failureMode(FailureMode.LOCAL_FALLBACK)
        .nanoTime(nanos::get).build()) {
      backend.mode = Mode.THROW;
      limiter.check("k", policy);
      assertThat(shareLines()).singleElement().asString()
          .startsWith("the local fallback (LOCAL_FALLBACK) made 1 of 1 decisions (100.0 %)");
    }
  }
}

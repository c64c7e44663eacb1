package dev.ratelimit.tck;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.spi.Backend;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

/**
 * What every part of {@link RateLimiterContract} stands on: a limiter on a {@link ManualClock} over
 * a backend the subclass supplies, keys unique to each test, and no backend error unnoticed.
 */
public abstract class ContractSupport {
  /** Where every test's clock starts: aligned to 10 s windows (and 20 s into a minute). */
  protected static final Instant START = Instant.ofEpochSecond(1_700_000_000L);

  /** The backend errors the limiter reported; a test that provokes one clears it. */
  protected final List<Throwable> backendErrors = new java.util.concurrent.CopyOnWriteArrayList<>();
  protected ManualClock clock;
  protected RateLimiter limiter;
  private String keyPrefix;

  /** A new backend for one test; it may share storage with others. */
  protected abstract Backend newBackend();

  /**
   * Whether the limiter under test has its near-cache on; null (the default) leaves the limiter's
   * default (on for a remote backend). A remote backend should also be run with it off: the
   * near-cache answers repeated denials with the Java twin of the algorithm, so only then does
   * every answer of the suite come from the backend itself.
   */
  protected Boolean nearCache() {
    return null;
  }

  /**
   * {@code keys} (distinct, each already unique to the test), or keys made from them that this
   * backend checks all or nothing together. The default returns them unchanged: the backend is
   * atomic across any keys. A backend atomic per group of keys only (Redis Cluster, per hash slot)
   * returns keys of one group, e.g. each with a suffix that puts it in the first key's slot.
   */
  protected List<String> checkedTogether(List<String> keys) {
    return keys;
  }

  @BeforeEach
  void setUpLimiter(TestInfo info) {
    clock = ManualClock.at(START);
    backendErrors.clear();
    limiter = correctnessLimiter(clock, newBackend(), backendErrors, nearCache());
    keyPrefix = "tck:" + info.getTestMethod().map(m -> m.getName()).orElse("test") + ":"
        + UUID.randomUUID() + ":";
  }

  @AfterEach
  void closeLimiter() {
    limiter.close();
    assertThat(backendErrors).as("backend errors: the contract is about answers, not failure modes").isEmpty();
  }

  /**
   * A limiter for correctness tests: a long timeout, no circuit breaker, and every backend error
   * recorded in {@code errors} (a test fails on any), so a failure mode never stands in for an answer.
   */
  static RateLimiter correctnessLimiter(ManualClock clock, Backend backend, List<Throwable> errors,
      Boolean nearCache) {
    RateLimiter.Builder builder = RateLimiter.builder();
    if (nearCache != null) {
      builder.nearCache(nearCache);
    }
    return builder.clock(clock).backend(backend)
        .timeout(Duration.ofSeconds(30))
        .circuitBreaker(0, Duration.ofSeconds(1))
        .listener(new RateLimitListener() {
          @Override
          public void onBackendError(Throwable error) {
            errors.add(error);
          }
        })
        .build();
  }

  /** A key unique to this test. */
  protected String key(String name) {
    return keyPrefix + name;
  }

  protected static Policy policy(Algorithm algorithm, long limit, Duration window) {
    return Policy.of(limit, window).withAlgorithm(algorithm);
  }

  protected void advanceMicros(long micros) {
    clock.advanceMicros(micros);
  }

  static long micros(Duration d) {
    return d.getSeconds() * 1_000_000L + d.getNano() / 1_000;
  }
}

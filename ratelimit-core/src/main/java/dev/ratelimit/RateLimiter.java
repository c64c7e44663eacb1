package dev.ratelimit;

import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.spi.Backend;
import java.time.InstantSource;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * Checks keys against policies. Thread-safe; one instance serves the whole application.
 *
 * <pre>{@code
 * RateLimiter limiter = RateLimiter.inMemory();
 * Policy perUser = Policy.parse("100/1m");
 * Decision d = limiter.check("user:42", perUser);
 * if (!d.allowed()) {
 *   // reject; retry after d.retryAfter()
 * }
 * }</pre>
 *
 * <p>Every method refuses bad input with an {@link IllegalArgumentException} naming the value,
 * before any state is touched: a null or empty key, a null policy, a cost below 1 or above the
 * policy's {@link Policy#capacity() capacity} (it could never pass). Any other string is a valid key.
 *
 * <p>A backend failure never escapes a check: the {@link FailureMode} decides instead.
 */
public interface RateLimiter extends AutoCloseable {

  /** Checks one unit of {@code key} against {@code policy}, consuming it when allowed. */
  default Decision check(String key, Policy policy) {
    return check(key, policy, 1);
  }

  /** Checks {@code cost} units of {@code key} against {@code policy}, consuming them when allowed. */
  Decision check(String key, Policy policy, long cost);

  /**
   * Checks {@code cost} units of {@code key} against every policy at once, in one round trip:
   * all consume, or none does. Each policy keeps its own state for the key.
   */
  MultiDecision checkAll(String key, List<Policy> policies, long cost);

  /** The same as {@link #check(String, Policy, long)}, without blocking on a remote backend. */
  CompletionStage<Decision> checkAsync(String key, Policy policy, long cost);

  /**
   * The state of {@code key} now, as the decision a cost-1 check would get, consuming nothing and
   * writing nothing; {@code remaining} is what is available now.
   */
  Decision inspect(String key, Policy policy);

  /** Forgets {@code key}'s state under {@code policy}. */
  void reset(String key, Policy policy);

  /** Closes the backend. */
  @Override
  void close();

  /** A limiter on the system clock and a fresh in-memory backend with default bounds. */
  static RateLimiter inMemory() {
    return builder().build();
  }

  /** A builder; defaults: system clock, in-memory backend, {@link FailureMode#FAIL_OPEN}. */
  static Builder builder() {
    return new Builder();
  }

  /** Configures a {@link RateLimiter}. Not thread-safe; {@link #build()} copies what it holds. */
  final class Builder {
    private InstantSource clock = InstantSource.system();
    private Backend backend;
    private boolean nearCache;
    private FailureMode failureMode = FailureMode.FAIL_OPEN;

    Builder() {}

    /** The clock the limiter reads for every check ({@link ManualClock} in tests). */
    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** Where state lives; default a new {@link InMemoryBackend}. */
    public Builder backend(Backend backend) {
      this.backend = Objects.requireNonNull(backend, "backend");
      return this;
    }

    /**
     * Whether to answer hot denied keys from a local near-cache. Accepted now; the near-cache
     * itself is not built yet, so this setting changes nothing.
     */
    public Builder nearCache(boolean nearCache) {
      this.nearCache = nearCache;
      return this;
    }

    /** What a backend failure decides; default {@link FailureMode#FAIL_OPEN}. */
    public Builder failureMode(FailureMode failureMode) {
      this.failureMode = Objects.requireNonNull(failureMode, "failureMode");
      return this;
    }

    /** A new limiter with this configuration. */
    public RateLimiter build() {
      Backend b = backend != null ? backend : InMemoryBackend.create();
      return new DefaultRateLimiter(clock, b, failureMode, nearCache);
    }
  }
}

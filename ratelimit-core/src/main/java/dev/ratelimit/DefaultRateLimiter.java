package dev.ratelimit;

import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.spi.Backend;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** The limiter: validates, reads the clock, dispatches to the backend, applies the failure mode. */
final class DefaultRateLimiter implements RateLimiter {
  /** The retryAfter of a FAIL_CLOSED decision. */
  static final Duration FAIL_CLOSED_RETRY = Duration.ofSeconds(1);

  private final InstantSource clock;
  private final Backend backend;
  private final FailureMode failureMode;
  private final boolean nearCache;
  private volatile Backend fallback;

  DefaultRateLimiter(InstantSource clock, Backend backend, FailureMode failureMode, boolean nearCache) {
    this.clock = clock;
    this.backend = backend;
    this.failureMode = failureMode;
    this.nearCache = nearCache;
  }

  @Override
  public Decision check(String key, Policy policy, long cost) {
    validate(key, policy, cost);
    long now = nowMicros();
    try {
      return backend.check(key, policy, cost, now);
    } catch (RuntimeException e) {
      return onFailure(key, policy, cost, now);
    }
  }

  @Override
  public MultiDecision checkAll(String key, List<Policy> policies, long cost) {
    Require.argument(policies != null && !policies.isEmpty(), "policies must not be empty, was %s", policies);
    for (int i = 0; i < policies.size(); i++) {
      Policy policy = policies.get(i);
      validate(key, policy, cost);
      for (int j = 0; j < i; j++) {
        Policy other = policies.get(j);
        if (other.name().equals(policy.name()) && other.algorithm() == policy.algorithm()) {
          throw new IllegalArgumentException("policies must be distinct by name and algorithm: '"
              + policy.name() + "' (" + policy.algorithm() + ") appears twice");
        }
      }
    }
    long now = nowMicros();
    try {
      return backend.checkAll(key, policies, cost, now);
    } catch (RuntimeException e) {
      if (failureMode == FailureMode.LOCAL_FALLBACK) {
        return fallback().checkAll(key, policies, cost, now);
      }
      List<Decision> decisions = new ArrayList<>(policies.size());
      for (Policy policy : policies) {
        decisions.add(onFailure(key, policy, cost, now));
      }
      return new MultiDecision(failureMode == FailureMode.FAIL_OPEN, decisions);
    }
  }

  @Override
  public CompletionStage<Decision> checkAsync(String key, Policy policy, long cost) {
    validate(key, policy, cost);
    long now = nowMicros();
    CompletionStage<Decision> stage;
    try {
      stage = backend.checkAsync(key, policy, cost, now);
    } catch (RuntimeException e) {
      return CompletableFuture.completedFuture(onFailure(key, policy, cost, now));
    }
    return stage.exceptionally(e -> onFailure(key, policy, cost, now));
  }

  @Override
  public Decision inspect(String key, Policy policy) {
    validate(key, policy, 1);
    return backend.inspect(key, policy, nowMicros());
  }

  @Override
  public void reset(String key, Policy policy) {
    validate(key, policy, 1);
    backend.reset(key, policy, nowMicros());
  }

  @Override
  public void close() {
    backend.close();
    Backend f = fallback;
    if (f != null) {
      f.close();
    }
  }

  private Decision onFailure(String key, Policy policy, long cost, long now) {
    return switch (failureMode) {
      case FAIL_OPEN -> new Decision(policy, true, -1, Duration.ZERO, Duration.ZERO, Duration.ZERO);
      case FAIL_CLOSED -> new Decision(policy, false, -1, FAIL_CLOSED_RETRY, FAIL_CLOSED_RETRY, Duration.ZERO);
      case LOCAL_FALLBACK -> fallback().check(key, policy, cost, now);
    };
  }

  private Backend fallback() {
    Backend f = fallback;
    if (f == null) {
      synchronized (this) {
        f = fallback;
        if (f == null) {
          f = InMemoryBackend.create();
          fallback = f;
        }
      }
    }
    return f;
  }

  private long nowMicros() {
    Instant now = clock.instant();
    return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
  }

  private static void validate(String key, Policy policy, long cost) {
    if (key == null || key.isEmpty()) {
      throw new IllegalArgumentException("key must not be null or empty, was "
          + (key == null ? "null" : "''"));
    }
    if (policy == null) {
      throw new IllegalArgumentException("policy must not be null");
    }
    if (cost < 1) {
      throw new IllegalArgumentException("cost must be at least 1, was " + cost);
    }
    if (cost > policy.capacity()) {
      throw new IllegalArgumentException("cost " + cost + " is greater than the capacity "
          + policy.capacity() + " of policy '" + policy.name() + "' (" + (policy.algorithm().usesBurst()
          ? "its burst" : "its limit") + "): it could never pass; raise the "
          + (policy.algorithm().usesBurst() ? "burst" : "limit") + " or split the cost");
    }
  }
}

package dev.ratelimit;

import dev.ratelimit.memory.InMemoryBackend;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@link FailureMode#LOCAL_FALLBACK}: an in-memory backend, created on the first failure, that
 * decides while the backend cannot, with each policy's limit and burst scaled to this instance's
 * share (rounded up, at least 1). Its state is kept across outages (it expires as any in-memory
 * state does), so a second outage shortly after the first continues from what this instance saw.
 *
 * <p>Decisions carry the caller's policy, not the scaled one: {@code remaining} is what is left of
 * the local share. A cost above a policy's scaled capacity is denied with {@code retryAfter} =
 * the FAIL_CLOSED retry, since the local share can never admit it.
 *
 * <p>Each policy is scaled once: the scaled copy is kept (by the caller's policy, compared by
 * value) and used by every later check, so an outage's checks build no policy, and the in-memory
 * states see one policy object, as they do outside an outage. At most {@value #MAX_SCALED} copies
 * are kept; a process that builds policies per request (more distinct ones than that) has the
 * copies dropped and made again.
 */
final class LocalFallback implements AutoCloseable {
  /** The most scaled policies kept. */
  static final int MAX_SCALED = 1_024;

  private final double share;
  /** Scaled copies by the caller's policy. */
  private final ConcurrentHashMap<Policy, Policy> copies = new ConcurrentHashMap<>();
  private final Duration tooCostlyRetryAfter;
  private volatile InMemoryBackend backend;

  LocalFallback(double share, Duration tooCostlyRetryAfter) {
    this.share = share;
    this.tooCostlyRetryAfter = tooCostlyRetryAfter;
  }

  Decision check(String key, Policy policy, long cost, long nowMicros) {
    Policy scaled = scale(policy);
    if (cost > scaled.capacity()) {
      return tooCostly(key, policy, scaled, nowMicros);
    }
    return as(policy, backend().check(key, scaled, cost, nowMicros));
  }

  MultiDecision checkAll(String key, List<Policy> policies, long cost, long nowMicros) {
    List<Policy> scaled = new ArrayList<>(policies.size());
    boolean tooCostly = false;
    for (Policy p : policies) {
      Policy s = scale(p);
      scaled.add(s);
      tooCostly |= cost > s.capacity();
    }
    List<Decision> decisions = new ArrayList<>(policies.size());
    if (tooCostly) { // denied without consuming; the others carry their state now, as inspect does
      for (int i = 0; i < policies.size(); i++) {
        Policy p = policies.get(i);
        Policy s = scaled.get(i);
        decisions.add(cost > s.capacity() ? tooCostly(key, p, s, nowMicros)
            : as(p, backend().inspect(key, s, nowMicros)));
      }
      return new MultiDecision(false, decisions);
    }
    MultiDecision m = backend().checkAll(key, scaled, cost, nowMicros);
    for (int i = 0; i < policies.size(); i++) {
      decisions.add(as(policies.get(i), m.decisions().get(i)));
    }
    return new MultiDecision(m.allowed(), decisions);
  }

  /** {@link #checkAll(String, List, long, long)} for pairs of different keys, all or nothing in the local state. */
  MultiDecision checkAll(List<KeyedPolicy> checks, long cost, long nowMicros) {
    List<KeyedPolicy> scaled = new ArrayList<>(checks.size());
    boolean tooCostly = false;
    for (KeyedPolicy c : checks) {
      Policy s = scale(c.policy());
      scaled.add(s == c.policy() ? c : new KeyedPolicy(c.key(), s));
      tooCostly |= cost > s.capacity();
    }
    List<Decision> decisions = new ArrayList<>(checks.size());
    if (tooCostly) { // denied without consuming; the others carry their state now, as inspect does
      for (int i = 0; i < checks.size(); i++) {
        KeyedPolicy c = checks.get(i);
        Policy s = scaled.get(i).policy();
        decisions.add(cost > s.capacity() ? tooCostly(c.key(), c.policy(), s, nowMicros)
            : as(c.policy(), backend().inspect(c.key(), s, nowMicros)));
      }
      return new MultiDecision(false, decisions);
    }
    MultiDecision m = backend().checkAll(scaled, cost, nowMicros);
    for (int i = 0; i < checks.size(); i++) {
      decisions.add(as(checks.get(i).policy(), m.decisions().get(i)));
    }
    return new MultiDecision(m.allowed(), decisions);
  }

  /** What {@link #checkAll} would decide now, consuming nothing (the limiter's {@code peekAll}). */
  MultiDecision peekAll(String key, List<Policy> policies, long cost, long nowMicros) {
    List<Decision> decisions = new ArrayList<>(policies.size());
    boolean allowed = true;
    for (Policy p : policies) {
      Policy s = scale(p);
      Decision d = cost > s.capacity() ? tooCostly(key, p, s, nowMicros) : as(p, backend().inspect(key, s, cost, nowMicros));
      allowed &= d.allowed();
      decisions.add(d);
    }
    return new MultiDecision(allowed, decisions);
  }

  /** Forgets the local state of {@code key} under {@code policy}, if there is any. */
  void reset(String key, Policy policy, long nowMicros) {
    InMemoryBackend b = backend;
    if (b != null) {
      b.reset(key, policy, nowMicros);
    }
  }

  /**
   * {@code policy} with limit and burst times the share, rounded up, at least 1; same name. The
   * same object for equal policies while it is kept (see the class comment).
   */
  Policy scale(Policy policy) {
    if (share >= 1.0) {
      return policy;
    }
    Policy s = copies.get(policy);
    if (s == null) {
      if (copies.size() >= MAX_SCALED) {
        copies.clear(); // policies built per request: kept bounded, made again when needed
      }
      s = copies.computeIfAbsent(policy, this::scaledCopy);
    }
    return s;
  }

  /** How many scaled policies are kept, for tests. */
  int scaledPolicies() {
    return copies.size();
  }

  private Policy scaledCopy(Policy policy) {
    return new Policy(scale(policy.limit()), policy.window(), policy.algorithm(), scale(policy.burst()),
        policy.name());
  }

  private long scale(long n) {
    return Math.min(n, Math.max(1, (long) Math.ceil(n * share)));
  }

  private Decision tooCostly(String key, Policy policy, Policy scaled, long nowMicros) {
    Decision now = backend().inspect(key, scaled, nowMicros);
    return new Decision(policy, false, now.remaining(), tooCostlyRetryAfter, now.resetAfter(), Duration.ZERO);
  }

  private static Decision as(Policy policy, Decision d) {
    return d.policy() == policy ? d
        : d.allowed() ? Decision.allowed(policy, d.remaining(), d.resetAfterMicros(), d.delayMicros())
        : Decision.denied(policy, d.remaining(), d.retryAfterMicros(), d.resetAfterMicros());
  }

  private InMemoryBackend backend() {
    InMemoryBackend b = backend;
    if (b == null) {
      synchronized (this) {
        b = backend;
        if (b == null) {
          b = InMemoryBackend.create();
          backend = b;
        }
      }
    }
    return b;
  }

  @Override
  public void close() {
    InMemoryBackend b = backend;
    if (b != null) {
      b.close();
    }
  }
}

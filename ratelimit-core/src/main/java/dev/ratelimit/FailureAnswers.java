package dev.ratelimit;

import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What the failure mode answers when the backend did not (it failed, timed out, or the open circuit
 * skipped it): FAIL_OPEN allows, FAIL_CLOSED denies, LOCAL_FALLBACK asks the in-memory fallback
 * (and allows should that fail); every answer reported, shadow mode applied.
 */
final class FailureAnswers {
  private final FailureMode failureMode;
  private final LocalFallback fallback;
  private final Reports reports;
  private final BackendCalls calls;

  FailureAnswers(FailureMode failureMode, LocalFallback fallback, Reports reports, BackendCalls calls) {
    this.failureMode = failureMode;
    this.fallback = fallback;
    this.reports = reports;
    this.calls = calls;
  }

  /** The failure mode's decision for one policy, with shadow mode applied and reported. */
  Decision one(String key, Policy policy, long cost, long now) {
    switch (failureMode) {
      case FAIL_OPEN:
        return reports.decided(policy, Reports.failOpen(policy), Source.FAILURE);
      case FAIL_CLOSED:
        return reports.decided(policy, reports.failClosed(policy), Source.FAILURE);
      default:
        Decision d;
        try {
          d = fallback.check(key, policy, cost, now);
        } catch (RuntimeException e) {
          calls.logError("the local fallback failed; FAIL_OPEN decides", e);
          return reports.decided(policy, Reports.failOpen(policy), Source.FAILURE);
        }
        return reports.decided(policy, d, Source.FALLBACK);
    }
  }

  /** The failure mode's all-or-nothing answer for {@code pairs}; {@code local} asks the local fallback. */
  <P> Judged all(List<P> pairs, Function<? super P, Policy> policyOf, Supplier<MultiDecision> local) {
    int n = pairs.size();
    Decision[] decisions = new Decision[n];
    switch (failureMode) {
      case FAIL_OPEN:
        for (int i = 0; i < n; i++) {
          decisions[i] = Reports.failOpen(policyOf.apply(pairs.get(i)));
        }
        return new Judged(true, decisions, Source.FAILURE);
      case FAIL_CLOSED:
        for (int i = 0; i < n; i++) {
          decisions[i] = reports.failClosed(policyOf.apply(pairs.get(i)));
        }
        return new Judged(false, decisions, Source.FAILURE);
      default:
        try {
          return Judged.of(local.get(), Source.FALLBACK);
        } catch (RuntimeException e) {
          calls.logError("the local fallback failed; FAIL_OPEN decides", e);
          for (int i = 0; i < n; i++) {
            decisions[i] = Reports.failOpen(policyOf.apply(pairs.get(i)));
          }
          return new Judged(true, decisions, Source.FAILURE);
        }
    }
  }

  /** The failure mode's answer to a peek: nothing consumed, the local fallback's state only read. */
  Judged peek(String key, List<Policy> policies, long cost, long now) {
    if (failureMode != FailureMode.LOCAL_FALLBACK) {
      return all(policies, p -> p, () -> fallback.checkAll(key, policies, cost, now)); // FAIL_OPEN and FAIL_CLOSED consume nothing
    }
    try {
      return Judged.of(fallback.peekAll(key, policies, cost, now), Source.FALLBACK);
    } catch (RuntimeException e) {
      calls.logError("the local fallback failed; FAIL_OPEN decides", e);
      Decision[] open = new Decision[policies.size()];
      for (int i = 0; i < open.length; i++) {
        open[i] = Reports.failOpen(policies.get(i));
      }
      return new Judged(true, open, Source.FAILURE);
    }
  }
}

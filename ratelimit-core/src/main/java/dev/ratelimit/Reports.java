package dev.ratelimit;

import dev.ratelimit.RateLimitListener.Outcome;
import dev.ratelimit.internal.LogThrottle;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * What the limiter reports of each decision: the listener's outcome, shadow mode (a shadow
 * policy's denial let through, logged at most once a minute per policy), the failure mode's own
 * answers (FAIL_OPEN, FAIL_CLOSED), and the share of decisions the failure mode made, logged at
 * most once a minute while it decides.
 */
final class Reports {
  private static final System.Logger LOG = System.getLogger(RateLimiter.class.getName());
  private static final long SHADOW_LOG_INTERVAL_NANOS = TimeUnit.MINUTES.toNanos(1);
  private static final long FAILURE_MODE_LOG_INTERVAL_NANOS = TimeUnit.MINUTES.toNanos(1);

  private final RateLimitListener listener;
  private final FailureMode failureMode;
  private final Duration failClosedRetryAfter;
  private final boolean shadowAll;
  private final Set<String> shadowPolicies;
  private final LogThrottle shadowLog;
  /** One line a minute at most while the failure mode decides (the open circuit skips calls silently). */
  private final LogThrottle failureModeLog;
  private final LongSupplier nanoTime;
  /** For the failure-mode line: the circuit's state. */
  private final CircuitBreaker breaker;
  /** Every decision reported, and those the failure mode made (FAIL_OPEN, FAIL_CLOSED, the local fallback). */
  private final LongAdder decisions = new LongAdder();
  private final LongAdder failureModeDecisions = new LongAdder();
  // the counts and time of the last failure-mode line; guarded by failureModeLog
  private long loggedDecisions;
  private long loggedFailureModeDecisions;
  private long loggedAt;

  Reports(RateLimitListener listener, FailureMode failureMode, Duration failClosedRetryAfter, boolean shadowAll,
      Set<String> shadowPolicies, LongSupplier nanoTime, CircuitBreaker breaker) {
    this.listener = listener;
    this.failureMode = failureMode;
    this.failClosedRetryAfter = failClosedRetryAfter;
    this.shadowAll = shadowAll;
    this.shadowPolicies = shadowPolicies;
    this.shadowLog = new LogThrottle(nanoTime, SHADOW_LOG_INTERVAL_NANOS);
    this.failureModeLog = new LogThrottle(nanoTime, FAILURE_MODE_LOG_INTERVAL_NANOS);
    this.nanoTime = nanoTime;
    this.breaker = breaker;
    this.loggedAt = nanoTime.getAsLong();
  }

  /** Whether any policy is in shadow mode. */
  boolean shadows() {
    return shadowAll || !shadowPolicies.isEmpty();
  }

  /** {@code d} as returned to the caller: a shadow policy's denial is allowed; reported. */
  Decision decided(Policy policy, Decision d, Source source) {
    if (!d.allowed() && isShadow(policy)) {
      return shadowed(policy, d, source);
    }
    return report(policy, d, source);
  }

  Decision report(Policy policy, Decision d, Source source) {
    count(source);
    listener.onDecision(policy, d.allowed() ? source.allowed : source.denied);
    return d;
  }

  /** Counts a decision; while the failure mode makes them, says so at most once a minute. */
  private void count(Source source) {
    decisions.increment();
    if (source == Source.FAILURE || source == Source.FALLBACK) {
      failureModeDecisions.increment();
      if (failureModeLog.tryAcquire("failure-mode") >= 0) {
        logFailureModeShare();
      }
    }
  }

  private void logFailureModeShare() {
    synchronized (failureModeLog) {
      long now = nanoTime.getAsLong();
      long all = decisions.sum();
      long byFailureMode = failureModeDecisions.sum();
      long d = all - loggedDecisions;
      long f = byFailureMode - loggedFailureModeDecisions;
      long seconds = TimeUnit.NANOSECONDS.toSeconds(now - loggedAt);
      boolean first = loggedDecisions == 0 && loggedFailureModeDecisions == 0;
      loggedDecisions = all;
      loggedFailureModeDecisions = byFailureMode;
      loggedAt = now;
      LOG.log(Level.WARNING, String.format(java.util.Locale.ROOT,
          "%s made %d of %d decisions (%.1f %%) %s: the backend failed or was too slow, or the open circuit "
              + "skipped it (circuit %s); logged at most once a minute while the failure mode decides",
          failureMode == FailureMode.LOCAL_FALLBACK ? "the local fallback (LOCAL_FALLBACK)" : failureMode,
          f, d, d == 0 ? 0.0 : 100.0 * f / d,
          (first ? "since the limiter was built, " : "in the last ") + seconds + " s" + (first ? " ago" : ""),
          breaker.state()));
    }
  }

  /** A shadow policy's denial, let through: allowed, no wait, remaining and resetAfter as said. */
  Decision shadowed(Policy policy, Decision denied, Source source) {
    count(source);
    listener.onDecision(policy, Outcome.SHADOW_DENIED);
    long suppressed = shadowLog.tryAcquire(policy.name());
    if (suppressed >= 0) {
      LOG.log(Level.INFO, "shadow policy '" + CheckArguments.printable(policy.name()) + "' would have denied a request"
          + (source == Source.BACKEND ? "" : source == Source.FALLBACK ? " (by the local fallback)"
              : " (by " + failureMode + ")")
          + (suppressed > 0 ? "; " + suppressed + " more since the last line" : "")
          + " (logged at most once a minute per policy)");
    }
    return Decision.allowed(policy, denied.remaining(), denied.resetAfterMicros(), 0);
  }

  boolean isShadow(Policy policy) {
    return shadowAll || (!shadowPolicies.isEmpty() && shadowPolicies.contains(policy.name()));
  }

  static Decision failOpen(Policy policy) {
    return new Decision(policy, true, -1, Duration.ZERO, Duration.ZERO, Duration.ZERO);
  }

  Decision failClosed(Policy policy) {
    return new Decision(policy, false, -1, failClosedRetryAfter, failClosedRetryAfter, Duration.ZERO);
  }

  /**
   * Applies shadow mode to an all-or-nothing answer and reports every policy's outcome. When only
   * shadow policies denied, nothing was consumed for the enforced ones: they are checked again,
   * alone, from the same source ({@code rerunOnBackend} for the backend's answer, else
   * {@code rerunOnFailure}).
   */
  <P> MultiDecision resolve(List<P> pairs, Function<? super P, Policy> policyOf, Judged first,
      Function<List<P>, Judged> rerunOnBackend, Function<List<P>, Judged> rerunOnFailure) {
    int n = pairs.size();
    Decision[] decisions = first.decisions();
    Source[] sources = new Source[n];
    Arrays.fill(sources, first.source());
    boolean[] shadowed = new boolean[n];
    boolean allowed = first.allowed();
    if (!allowed) {
      boolean enforcedDenied = false;
      for (int i = 0; i < n; i++) {
        if (!decisions[i].allowed()) {
          if (isShadow(policyOf.apply(pairs.get(i)))) {
            shadowed[i] = true;
          } else {
            enforcedDenied = true;
          }
        }
      }
      if (!enforcedDenied) { // only shadow policies denied: see rerunFor
        List<P> enforced = new ArrayList<>(n);
        int[] at = new int[n];
        for (int i = 0; i < n; i++) {
          if (!isShadow(policyOf.apply(pairs.get(i)))) {
            at[enforced.size()] = i;
            enforced.add(pairs.get(i));
          }
        }
        if (enforced.isEmpty()) {
          allowed = true;
        } else {
          Judged again = (first.source() == Source.FAILURE || first.source() == Source.FALLBACK
              ? rerunOnFailure : rerunOnBackend).apply(enforced);
          for (int j = 0; j < enforced.size(); j++) {
            decisions[at[j]] = again.decisions()[j];
            sources[at[j]] = again.source();
          }
          allowed = again.allowed();
        }
      }
    }
    List<Decision> result = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      Policy policy = policyOf.apply(pairs.get(i));
      Decision d = decisions[i];
      result.add(shadowed[i] ? shadowed(policy, d, sources[i]) : report(policy, d, sources[i]));
    }
    return new MultiDecision(allowed, result);
  }

  /**
   * The enforced pairs to check again when only shadow policies denied {@code first} (see
   * {@link #resolve}); null when {@code first} needs no second call.
   */
  <P> List<P> rerunFor(List<P> pairs, Function<? super P, Policy> policyOf, Judged first) {
    if (first.allowed()) {
      return null;
    }
    List<P> enforced = new ArrayList<>(pairs.size());
    for (int i = 0; i < pairs.size(); i++) {
      boolean shadow = isShadow(policyOf.apply(pairs.get(i)));
      if (!first.decisions()[i].allowed() && !shadow) {
        return null; // an enforced denial stands
      }
      if (!shadow) {
        enforced.add(pairs.get(i));
      }
    }
    return enforced.isEmpty() ? null : enforced;
  }
}

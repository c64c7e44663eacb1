package dev.ratelimit.spring;

import dev.ratelimit.Policy;
import dev.ratelimit.RateLimitListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The limiter's Micrometer meters, fed as a {@link RateLimitListener}:
 * <ul>
 *   <li>{@value #DECISIONS} (counter), tags {@code policy} and {@code outcome} (the
 *       {@link RateLimitListener.Outcome} in lower case: {@code allowed}, {@code denied}, ...);</li>
 *   <li>{@value #BACKEND_LATENCY} (timer), tag {@code outcome}: {@code success} or {@code error};</li>
 *   <li>{@value #BACKEND_ERRORS} (counter), tag {@code exception}: the error's simple class name;</li>
 *   <li>{@value #CIRCUIT_STATE} (gauge): 0 closed, 1 half-open, 2 open;</li>
 *   <li>{@value #FAILURE_MODE_DECISIONS} (counter): decisions the failure mode made (outcomes
 *       {@code failure_allowed}, {@code failure_denied}, {@code fallback_allowed}, {@code
 *       fallback_denied}), all policies together;</li>
 *   <li>{@value #FAILURE_MODE_SHARE} (gauge): their share of all decisions over the last minute,
 *       from 0 to 1: alert on it above 0.</li>
 * </ul>
 * Cardinality is bounded: keys are never tags, at most {@code maxPolicyTags} policy names are
 * (later ones count under {@value #OTHER}), and at most {@value #MAX_EXCEPTION_TAGS} exception
 * classes. Meters are built once and cached; the hot path only looks them up and counts.
 */
public final class RateLimitMetrics implements RateLimitListener {
  /** Decisions by policy and outcome. */
  public static final String DECISIONS = "ratelimit.decisions";
  /** Backend call latency by outcome. */
  public static final String BACKEND_LATENCY = "ratelimit.backend.latency";
  /** Backend errors by exception class. */
  public static final String BACKEND_ERRORS = "ratelimit.backend.errors";
  /** The circuit breaker's state. */
  public static final String CIRCUIT_STATE = "ratelimit.circuit.state";
  /** Decisions made by the failure mode, every policy together. */
  public static final String FAILURE_MODE_DECISIONS = "ratelimit.failure.mode.decisions";
  /** The share of decisions the failure mode made over the last minute. */
  public static final String FAILURE_MODE_SHARE = "ratelimit.failure.mode.share";
  /** The tag value that stands for every policy or exception beyond the cap. */
  public static final String OTHER = "other";
  /** The default cap on distinct policy tag values. */
  public static final int DEFAULT_MAX_POLICY_TAGS = 1_000;
  /** The cap on distinct exception tag values. */
  static final int MAX_EXCEPTION_TAGS = 100;

  private static final Outcome[] OUTCOMES = Outcome.values();

  private final MeterRegistry registry;
  private final int maxPolicyTags;
  private final Map<String, AtomicReferenceArray<Counter>> decisions = new ConcurrentHashMap<>();
  private final AtomicReferenceArray<Counter> otherDecisions = new AtomicReferenceArray<>(OUTCOMES.length);
  private final Map<Class<?>, Counter> errors = new ConcurrentHashMap<>();
  private Counter otherErrors; // guarded by errors
  private final Timer success;
  private final Timer error;
  private final AtomicInteger circuit = new AtomicInteger();
  private final Counter failureMode;
  private final MinuteShare failureModeShare;

  /** Meters in {@code registry}, with at most {@value #DEFAULT_MAX_POLICY_TAGS} policy tag values. */
  public RateLimitMetrics(MeterRegistry registry) {
    this(registry, DEFAULT_MAX_POLICY_TAGS);
  }

  /** Meters in {@code registry}, with at most {@code maxPolicyTags} policy tag values. */
  public RateLimitMetrics(MeterRegistry registry, int maxPolicyTags) {
    this(registry, maxPolicyTags, System::nanoTime);
  }

  /** For tests: the last minute of {@value #FAILURE_MODE_SHARE} on {@code nanoTime}. */
  RateLimitMetrics(MeterRegistry registry, int maxPolicyTags, java.util.function.LongSupplier nanoTime) {
    if (maxPolicyTags < 1) {
      throw new IllegalArgumentException("maxPolicyTags must be at least 1, was " + maxPolicyTags);
    }
    this.registry = registry;
    this.maxPolicyTags = maxPolicyTags;
    this.success = latency("success");
    this.error = latency("error");
    Gauge.builder(CIRCUIT_STATE, circuit, AtomicInteger::get)
        .description("The rate limiter's circuit breaker: 0 closed, 1 half-open, 2 open")
        .register(registry);
    this.failureMode = Counter.builder(FAILURE_MODE_DECISIONS)
        .description("Rate limit decisions made by the failure mode, because the backend failed or was skipped")
        .register(registry);
    this.failureModeShare = new MinuteShare(nanoTime);
    Gauge.builder(FAILURE_MODE_SHARE, failureModeShare, MinuteShare::share)
        .description("The share of rate limit decisions the failure mode made over the last minute, 0 to 1")
        .register(registry);
  }

  private Timer latency(String outcome) {
    return Timer.builder(BACKEND_LATENCY).tag("outcome", outcome)
        .description("Rate limiter backend calls").register(registry);
  }

  @Override
  public void onDecision(Policy policy, Outcome outcome) {
    AtomicReferenceArray<Counter> byOutcome = decisions.get(policy.name());
    if (byOutcome == null) {
      byOutcome = countersOf(policy.name());
    }
    Counter counter = byOutcome.get(outcome.ordinal());
    if (counter == null) {
      String tag = byOutcome == otherDecisions ? OTHER : policy.name();
      counter = Counter.builder(DECISIONS).tag("policy", tag).tag("outcome", tagOf(outcome))
          .description("Rate limit decisions").register(registry); // the registry returns an existing one
      byOutcome.set(outcome.ordinal(), counter);
    }
    counter.increment();
    boolean byFailureMode = byFailureMode(outcome);
    if (byFailureMode) {
      failureMode.increment();
    }
    failureModeShare.record(byFailureMode);
  }

  private static boolean byFailureMode(Outcome outcome) {
    return switch (outcome) {
      case FAILURE_ALLOWED, FAILURE_DENIED, FALLBACK_ALLOWED, FALLBACK_DENIED -> true;
      default -> false;
    };
  }

  private AtomicReferenceArray<Counter> countersOf(String policyName) {
    synchronized (decisions) {
      AtomicReferenceArray<Counter> byOutcome = decisions.get(policyName);
      if (byOutcome != null) {
        return byOutcome;
      }
      if (decisions.size() >= maxPolicyTags) {
        return otherDecisions;
      }
      byOutcome = new AtomicReferenceArray<>(OUTCOMES.length);
      decisions.put(policyName, byOutcome);
      return byOutcome;
    }
  }

  @Override
  public void onBackendCall(long nanos, boolean succeeded) {
    (succeeded ? success : error).record(nanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void onBackendError(Throwable e) {
    Counter counter = errors.get(e.getClass());
    if (counter == null) {
      counter = errorCounter(e.getClass());
    }
    counter.increment();
  }

  private Counter errorCounter(Class<?> type) {
    synchronized (errors) {
      Counter counter = errors.get(type);
      if (counter != null) {
        return counter;
      }
      if (errors.size() >= MAX_EXCEPTION_TAGS) {
        if (otherErrors == null) {
          otherErrors = errorCounter(OTHER);
        }
        return otherErrors;
      }
      counter = errorCounter(type.getSimpleName().isEmpty() ? type.getName() : type.getSimpleName());
      errors.put(type, counter);
      return counter;
    }
  }

  private Counter errorCounter(String exception) {
    return Counter.builder(BACKEND_ERRORS).tag("exception", exception)
        .description("Rate limiter backend errors, handled by the failure mode").register(registry);
  }

  @Override
  public void onCircuitStateChange(CircuitState from, CircuitState to) {
    circuit.set(switch (to) {
      case CLOSED -> 0;
      case HALF_OPEN -> 1;
      case OPEN -> 2;
    });
  }

  /** The {@code outcome} tag of a decision: the enum's name in lower case. */
  static String tagOf(Outcome outcome) {
    return outcome.name().toLowerCase(Locale.ROOT);
  }
}

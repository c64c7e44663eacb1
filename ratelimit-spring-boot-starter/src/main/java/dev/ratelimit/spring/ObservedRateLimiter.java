package dev.ratelimit.spring;

import dev.ratelimit.Decision;
import dev.ratelimit.FailureMode;
import dev.ratelimit.KeyedPolicy;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A limiter whose checks are observed ({@link RateLimitObservation}). Every method of {@link
 * RateLimiter}, the interface's defaults too, is passed on to the wrapped limiter: a default
 * re-implements a method through others and would lose what the wrapped limiter does its own way.
 */
final class ObservedRateLimiter implements RateLimiter {
  private final RateLimiter delegate;
  private final ObservationRegistry registry;
  /** The policy values given so far, at most {@link RateLimitObservation#MAX_POLICY_VALUES}. */
  private final Set<String> policyValues = ConcurrentHashMap.newKeySet();

  ObservedRateLimiter(RateLimiter delegate, ObservationRegistry registry) {
    this.delegate = delegate;
    this.registry = registry;
  }

  @Override
  public Decision check(String key, Policy policy) {
    if (registry.isNoop() || policy == null) { // no policy: the limiter's refusal, unobserved
      return delegate.check(key, policy);
    }
    return observed(policy.name(), () -> delegate.check(key, policy), d -> d);
  }

  @Override
  public Decision check(String key, Policy policy, long cost) {
    if (registry.isNoop() || policy == null) {
      return delegate.check(key, policy, cost);
    }
    return observed(policy.name(), () -> delegate.check(key, policy, cost), d -> d);
  }

  @Override
  public boolean tryAcquire(String key, Policy policy) {
    if (registry.isNoop()) {
      return delegate.tryAcquire(key, policy);
    }
    return check(key, policy).allowed(); // the decision is needed for its outcome, as below
  }

  @Override
  public boolean tryAcquire(String key, Policy policy, long cost) {
    if (registry.isNoop()) {
      return delegate.tryAcquire(key, policy, cost);
    }
    // the decision is needed for its outcome; the limiter builds one anyway with a listener
    return check(key, policy, cost).allowed();
  }

  @Override
  public MultiDecision checkAll(String key, List<Policy> policies, long cost) {
    if (registry.isNoop() || policies == null || policies.isEmpty()) {
      return delegate.checkAll(key, policies, cost); // an empty list: the limiter's refusal, unobserved
    }
    return observed(names(policies), () -> delegate.checkAll(key, policies, cost), MultiDecision::limiting);
  }

  @Override
  public MultiDecision checkAll(List<KeyedPolicy> checks, long cost) {
    if (registry.isNoop() || !observable(checks)) {
      return delegate.checkAll(checks, cost); // the limiter's refusal, unobserved
    }
    return observed(names(policies(checks)), () -> delegate.checkAll(checks, cost), MultiDecision::limiting);
  }

  @Override
  public CompletionStage<MultiDecision> checkAllAsync(List<KeyedPolicy> checks, long cost) {
    if (registry.isNoop() || !observable(checks)) {
      return delegate.checkAllAsync(checks, cost);
    }
    return observedAsync(names(policies(checks)), () -> delegate.checkAllAsync(checks, cost), MultiDecision::limiting);
  }

  /** Whether the limiter will check {@code checks} (its refusals of bad input go unobserved, as checkAll's do). */
  private static boolean observable(List<KeyedPolicy> checks) {
    if (checks == null || checks.isEmpty()) {
      return false;
    }
    for (KeyedPolicy check : checks) {
      if (check == null) { // List.of(...).contains(null) would throw
        return false;
      }
    }
    return true;
  }

  /** Whether {@code policies} is a list the limiter will reserve on (its refusals of bad input go unobserved). */
  private static boolean named(List<Policy> policies) {
    if (policies == null || policies.isEmpty()) {
      return false;
    }
    for (Policy policy : policies) {
      if (policy == null) { // List.of(...).contains(null) would throw
        return false;
      }
    }
    return true;
  }

  private static List<Policy> policies(List<KeyedPolicy> checks) {
    List<Policy> policies = new java.util.ArrayList<>(checks.size());
    for (KeyedPolicy check : checks) {
      policies.add(check.policy());
    }
    return policies;
  }

  @Override
  public CompletionStage<Decision> checkAsync(String key, Policy policy, long cost) {
    if (registry.isNoop() || policy == null) {
      return delegate.checkAsync(key, policy, cost);
    }
    return observedAsync(policy.name(), () -> delegate.checkAsync(key, policy, cost), d -> d);
  }

  @Override
  public CompletionStage<MultiDecision> checkAllAsync(String key, List<Policy> policies, long cost) {
    if (registry.isNoop() || policies == null || policies.isEmpty()) {
      return delegate.checkAllAsync(key, policies, cost);
    }
    return observedAsync(names(policies), () -> delegate.checkAllAsync(key, policies, cost), MultiDecision::limiting);
  }

  /**
   * {@code call}, a check, observed under {@code policies}: its decision and outcome those of the
   * {@code limiting} decision of its answer (the answer itself for one policy).
   */
  private <T> T observed(String policies, Supplier<T> call, Function<T, Decision> limiting) {
    Observation observation = start(policies);
    CheckOutcomes outcomes = CheckOutcomes.open();
    try (Observation.Scope scope = observation.openScope()) {
      T answer = call.get();
      decided(observation, answer, limiting.apply(answer), outcomes);
      return answer;
    } catch (RuntimeException | Error e) {
      observation.error(e);
      throw e;
    } finally {
      outcomes.close();
      observation.stop();
    }
  }

  /** {@link #observed} of a check without blocking: observed until it answers. */
  private <T> CompletionStage<T> observedAsync(String policies, Supplier<CompletionStage<T>> call,
      Function<T, Decision> limiting) {
    Observation observation = start(policies);
    CheckOutcomes outcomes = CheckOutcomes.open();
    CompletionStage<T> answer;
    try (Observation.Scope scope = observation.openScope()) {
      answer = call.get();
    } catch (RuntimeException | Error e) {
      observation.error(e);
      observation.stop();
      throw e;
    } finally {
      outcomes.close(); // what was decided on this thread stays readable below
    }
    return answer.whenComplete((result, error) -> {
      if (error != null) {
        observation.error(error);
      } else {
        decided(observation, result, limiting.apply(result), outcomes);
      }
      observation.stop();
    });
  }

  /** Tags {@code observation} with {@code answer}'s decision and its {@code limiting} decision's outcome. */
  private static void decided(Observation observation, Object answer, Decision limiting, CheckOutcomes outcomes) {
    boolean allowed = answer instanceof MultiDecision m ? m.allowed() : limiting.allowed();
    decided(observation, allowed, outcomes.of(limiting));
  }

  private Observation start(String policies) {
    return Observation.createNotStarted(RateLimitObservation.NAME, registry)
        .lowCardinalityKeyValue(RateLimitObservation.POLICY, policyValue(policies))
        .start();
  }

  private static void decided(Observation observation, boolean allowed, String outcome) {
    observation.lowCardinalityKeyValue(RateLimitObservation.DECISION, allowed ? "allowed" : "denied");
    observation.lowCardinalityKeyValue(RateLimitObservation.OUTCOME, outcome);
  }

  /** {@code name}, or {@link RateLimitObservation#OTHER} once the distinct values are at their cap. */
  private String policyValue(String name) {
    if (policyValues.contains(name)) {
      return name;
    }
    synchronized (policyValues) {
      if (policyValues.size() < RateLimitObservation.MAX_POLICY_VALUES) {
        policyValues.add(name);
        return name;
      }
    }
    return policyValues.contains(name) ? name : RateLimitObservation.OTHER;
  }

  private static String names(List<Policy> policies) {
    if (policies.size() == 1) {
      return policies.get(0).name();
    }
    StringBuilder names = new StringBuilder();
    for (Policy policy : policies) {
      if (policy != null) {
        names.append(names.length() == 0 ? "" : ",").append(policy.name());
      }
    }
    return names.toString();
  }

  /**
   * A reservation, observed as a check of its estimate: the reservation's decision and outcome.
   * Its settles are not checks, and go unobserved (a failed one is counted by {@link #failedSettles}).
   */
  @Override
  public Reservation reserve(String key, Policy policy, long estimate) {
    if (registry.isNoop() || policy == null) {
      return delegate.reserve(key, policy, estimate);
    }
    return observed(policy.name(), () -> delegate.reserve(key, policy, estimate), Reservation::decision);
  }

  @Override
  public Reservation reserve(String key, List<Policy> policies, long estimate) {
    if (registry.isNoop() || !named(policies)) {
      return delegate.reserve(key, policies, estimate);
    }
    return observed(names(policies), () -> delegate.reserve(key, policies, estimate), Reservation::decision);
  }

  @Override
  public CompletionStage<Reservation> reserveAsync(String key, Policy policy, long estimate) {
    if (registry.isNoop() || policy == null) {
      return delegate.reserveAsync(key, policy, estimate);
    }
    return observedAsync(policy.name(), () -> delegate.reserveAsync(key, policy, estimate), Reservation::decision);
  }

  @Override
  public CompletionStage<Reservation> reserveAsync(String key, List<Policy> policies, long estimate) {
    if (registry.isNoop() || !named(policies)) {
      return delegate.reserveAsync(key, policies, estimate);
    }
    return observedAsync(names(policies), () -> delegate.reserveAsync(key, policies, estimate),
        Reservation::decision);
  }

  @Override
  public Reservation reserve(List<KeyedPolicy> checks, long estimate) {
    if (registry.isNoop() || !observable(checks)) {
      return delegate.reserve(checks, estimate);
    }
    return observed(names(policies(checks)), () -> delegate.reserve(checks, estimate), Reservation::decision);
  }

  @Override
  public CompletionStage<Reservation> reserveAsync(List<KeyedPolicy> checks, long estimate) {
    if (registry.isNoop() || !observable(checks)) {
      return delegate.reserveAsync(checks, estimate);
    }
    return observedAsync(names(policies(checks)), () -> delegate.reserveAsync(checks, estimate),
        Reservation::decision);
  }

  @Override
  public Reservation resume(String key, List<Policy> policies, long estimate, List<dev.ratelimit.spi.Mark> marks) {
    return delegate.resume(key, policies, estimate, marks);
  }

  @Override
  public boolean takesReservations() {
    return delegate.takesReservations();
  }

  @Override
  public long failedSettles() {
    return delegate.failedSettles();
  }

  /**
   * The wrapped limiter's peek, unobserved: it consumes nothing and is not a check. Passed on, not
   * the interface's default, which would answer from {@link #inspect} without the limiter's
   * timeout, circuit breaker, failure mode, shadow policies and listener.
   */
  @Override
  public MultiDecision peekAll(String key, List<Policy> policies, long cost) {
    return delegate.peekAll(key, policies, cost);
  }

  @Override
  public Decision inspect(String key, Policy policy) {
    return delegate.inspect(key, policy);
  }

  @Override
  public void reset(String key, Policy policy) {
    delegate.reset(key, policy);
  }

  @Override
  public long nearCacheSize() {
    return delegate.nearCacheSize();
  }

  @Override
  public FailureMode failureMode() {
    return delegate.failureMode();
  }

  @Override
  public RateLimitListener.CircuitState circuitState() {
    return delegate.circuitState();
  }

  @Override
  public void close() {
    delegate.close();
  }

  @Override
  public String toString() {
    return "observed " + delegate;
  }
}

package dev.ratelimit;

import dev.ratelimit.internal.LogThrottle;
import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.spi.Command;
import dev.ratelimit.spi.Evaluation;
import dev.ratelimit.spi.Keys;
import dev.ratelimit.spi.MultiEvaluation;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The limiter's dispatch: validates ({@link CheckArguments}), reads the clock, asks the near-cache,
 * then the backend ({@link BackendCalls}: through the circuit breaker, with a timeout), else the
 * failure mode; every decision is reported with shadow mode applied ({@link Reports}).
 *
 * <p>When the backend implements the async methods (every remote one does), every check, also the
 * synchronous one, goes through them and waits on the stage with what is left of the timeout, so a
 * remote backend that hangs cannot hold a caller longer. A backend that keeps the SPI's defaults
 * (the in-memory one) is called directly: the defaults would make the same call on the same
 * thread, and a check stays free of futures.
 */
final class DefaultRateLimiter implements RateLimiter {
  private static final System.Logger LOG = System.getLogger(RateLimiter.class.getName());
  private static final long ERROR_LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);
  /** Everything the builder configured. */
  record Settings(InstantSource clock, Backend backend, FailureMode failureMode, boolean nearCache,
      long nearCacheMaximumEntries, Duration timeout, Duration failClosedRetryAfter, double localFallbackShare,
      int failureThreshold,
      Duration coolDown, RateLimitListener listener, boolean shadow, Set<String> shadowPolicies,
      LongSupplier nanoTime) {}

  /** A pair's policy, when the pairs are one key's policies. */
  private static final Function<Policy, Policy> POLICY = Function.identity();

  /** A pair's policy, when the pairs are (key, policy) pairs. */
  private static final Function<KeyedPolicy, Policy> PAIR_POLICY = KeyedPolicy::policy;

  private final InstantSource clock;
  /** The clock when it is a {@link ManualClock}, read without an {@link Instant}; else null. */
  private final ManualClock manualClock;
  private final Backend backend;
  private final FailureMode failureMode;
  /** Hot denied keys answered locally; null when off. */
  private final NearCache nearCache;
  private final Duration timeout;
  private final long timeoutNanos;
  private final LocalFallback fallback;
  private final CircuitBreaker breaker;
  /** Calls to the backend, bounded by the breaker and the timeout, and reported. */
  private final BackendCalls calls;
  private final RateLimitListener listener;
  /** What each decision is reported as, shadow mode applied, and the failure mode's own answers. */
  private final Reports reports;
  /** What the failure mode decides when the backend did not answer. */
  private final FailureAnswers failures;
  /** Whether the backend has its own checkAsync, and its own checkAllAsync. */
  private final boolean asyncCheck;
  /** Whether the backend checks pairs of different keys together, and has its own async form of it. */
  private final boolean checksAcrossKeys;
  /**
   * The backend when a check can go straight to it and back, else null: the in-memory backend (no
   * I/O, so nothing to time out, nothing worth a near-cache), no near-cache, no listener, no shadow
   * policy. {@link #tryAcquire} then asks it for the answer alone.
   */
  private final InMemoryBackend plainBackend;
  /** Reserves and settles reservations. */
  private final Reservations reservations;

  DefaultRateLimiter(Settings s) {
    this.clock = s.clock();
    this.manualClock = s.clock() instanceof ManualClock m ? m : null;
    this.backend = s.backend();
    this.failureMode = s.failureMode();
    this.nearCache = s.nearCache() ? new NearCache(s.nearCacheMaximumEntries()) : null;
    this.timeout = s.timeout();
    this.timeoutNanos = s.timeout().toNanos();
    this.fallback = s.failureMode() == FailureMode.LOCAL_FALLBACK
        ? new LocalFallback(s.localFallbackShare(), s.failClosedRetryAfter()) : null;
    this.listener = s.listener();
    this.breaker = new CircuitBreaker(s.failureThreshold(), s.coolDown(), s.nanoTime(), s.listener());
    this.calls = new BackendCalls(breaker, s.listener(), s.timeout(), s.failureMode(),
        new LogThrottle(s.nanoTime(), ERROR_LOG_INTERVAL_NANOS));
    this.reports = new Reports(s.listener(), s.failureMode(), s.failClosedRetryAfter(), s.shadow(), s.shadowPolicies(),
        s.nanoTime(), breaker);
    this.failures = new FailureAnswers(s.failureMode(), fallback, reports, calls);
    this.asyncCheck = backend.isAsync();
    this.checksAcrossKeys = backend.checksAcrossKeys();
    boolean plain = backend instanceof InMemoryBackend && !asyncCheck && nearCache == null
        && listener == RateLimitListener.NONE && !reports.shadows();
    this.plainBackend = plain ? (InMemoryBackend) backend : null;
    this.reservations = new Reservations(backend, calls, reports, failures, fallback, nearCache, this::nowMicros,
        timeoutNanos);
  }

  /**
   * The form the near-cache keeps {@code key} under, worked out once per call (a long key's is a
   * SHA-256); null without a near-cache.
   */
  private String nearKey(String key) {
    return nearCache == null ? null : Keys.bounded(key);
  }

  /** The decision of an evaluation; null when the backend answered none (reported as a failure). */
  private static Decision decisionOf(Evaluation e) {
    return e == null ? null : e.decision();
  }

  /** The decisions of an evaluation; null when the backend answered none. */
  private static MultiDecision decisionOf(MultiEvaluation e) {
    return e == null ? null : e.decision();
  }

  /** The backend's cross-key check: its own async call, else its blocking one on this thread. */
  private CompletionStage<MultiDecision> across(List<KeyedPolicy> checks, long cost, long now) {
    Command.CheckAcross command = new Command.CheckAcross(checks, cost, now);
    return asyncCheck ? backend.executeAsync(command) : CompletableFuture.completedFuture(backend.execute(command));
  }

  /** The circuit breaker (for tests). */
  CircuitBreaker breaker() {
    return breaker;
  }

  // ---------------------------------------------------------------------------------- check

  @Override
  public Decision check(String key, Policy policy, long cost) {
    CheckArguments.validate(key, policy, cost);
    return checkValid(key, policy, cost, nowMicros());
  }

  /** For tests: whether checks go straight to the in-memory backend (and tryAcquire builds no decision). */
  boolean isPlain() {
    return plainBackend != null;
  }

  @Override
  public boolean tryAcquire(String key, Policy policy, long cost) {
    CheckArguments.validate(key, policy, cost);
    long now = nowMicros();
    if (plainBackend != null) {
      try {
        return plainBackend.tryAcquire(key, policy, cost, now);
      } catch (RuntimeException e) { // a bug in the backend: reported, and the failure mode decides
        calls.settle(CircuitBreaker.CALL, 0, null, e);
        return failures.one(key, policy, cost, now).allowed();
      }
    }
    return checkValid(key, policy, cost, now).allowed();
  }

  private Decision checkValid(String key, Policy policy, long cost, long now) {
    if (plainBackend != null) {
      try {
        return plainBackend.check(key, policy, cost, now);
      } catch (RuntimeException e) { // a bug in the backend: reported, and the failure mode decides
        calls.settle(CircuitBreaker.CALL, 0, null, e);
        return failures.one(key, policy, cost, now);
      }
    }
    String nearKey = nearKey(key);
    Decision local = localAnswer(key, nearKey, policy, cost, now);
    if (local != null) {
      return local;
    }
    Decision d;
    if (asyncCheck) {
      long start = System.nanoTime();
      d = calls.call(() -> evaluateAsync(key, nearKey, policy, cost, now), start, start + timeoutNanos);
    } else {
      d = checkDirectly(key, nearKey, policy, cost, now);
    }
    return d != null ? reports.decided(policy, d, Source.BACKEND) : failures.one(key, policy, cost, now);
  }

  /** The near-cache's answer, shadow mode applied and reported; null when the backend must answer. */
  private Decision localAnswer(String key, String nearKey, Policy policy, long cost, long now) {
    Decision local = nearCache == null ? null : nearCache.answer(nearKey, policy, cost, now);
    return local == null ? null : reports.decided(policy, local, Source.NEAR_CACHE);
  }

  /** {@link #call} for a backend without its own checkAsync, with no future and no lambda. */
  private Decision checkDirectly(String key, String nearKey, Policy policy, long cost, long now) {
    long permit = breaker.tryAcquire();
    if (permit == CircuitBreaker.REFUSED) {
      return null;
    }
    long start = listener == RateLimitListener.NONE ? 0 : System.nanoTime();
    Decision d = null;
    Throwable error = null;
    try {
      if (nearCache == null) {
        d = decisionOf(backend.execute(new Command.Check(key, policy, cost, now)));
      } else {
        long resets = nearCache.resets(nearKey);
        Evaluation e = backend.execute(new Command.Check(key, policy, cost, now));
        nearCache.remember(nearKey, policy, cost, now, e, resets);
        d = e.decision();
      }
    } catch (RuntimeException e) {
      error = e;
    }
    return calls.settle(permit, start, d, error) ? d : null;
  }

  @Override
  public CompletionStage<Decision> checkAsync(String key, Policy policy, long cost) {
    CheckArguments.validate(key, policy, cost);
    long now = nowMicros();
    if (!asyncCheck) {
      return CompletableFuture.completedFuture(checkValid(key, policy, cost, now));
    }
    String nearKey = nearKey(key);
    Decision local = localAnswer(key, nearKey, policy, cost, now);
    if (local != null) {
      return CompletableFuture.completedFuture(local);
    }
    long start = System.nanoTime();
    return calls.callAsync(() -> evaluateAsync(key, nearKey, policy, cost, now), start, start + timeoutNanos)
        .thenApply(d -> d != null ? reports.decided(policy, d, Source.BACKEND) : failures.one(key, policy, cost, now))
        .exceptionally(e -> { // never happens by design; should it, the caller must still get an answer
          calls.logError("checkAsync could not complete normally; FAIL_OPEN decides", e);
          return Reports.failOpen(policy);
        });
  }

  // ---------------------------------------------------------------------------------- checkAll

  @Override
  public MultiDecision checkAll(String key, List<Policy> policies, long cost) {
    CheckArguments.validateAll(key, policies, cost);
    List<Policy> ps = List.copyOf(policies);
    long now = nowMicros();
    if (plainBackend != null) {
      try {
        return plainBackend.checkAll(key, ps, cost, now);
      } catch (RuntimeException e) { // a bug in the backend: reported, and the failure mode decides
        calls.settle(CircuitBreaker.CALL, 0, null, e);
        return reports.resolve(ps, POLICY, failedAll(key, ps, cost, now),
            enforced -> failedAll(key, enforced, cost, now), enforced -> failedAll(key, enforced, cost, now));
      }
    }
    long start = System.nanoTime();
    long deadline = start + timeoutNanos;
    String nearKey = nearKey(key);
    MultiDecision local = nearCache == null ? null : nearCache.answerAll(nearKey, ps, cost, now);
    Judged first = local != null ? Judged.of(local, Source.NEAR_CACHE)
        : backendAll(key, nearKey, ps, cost, now, start, deadline);
    return reports.resolve(ps, POLICY, first,
        // the enforced policies again; not sent once the first call has used the whole timeout (it
        // could consume while the failure mode decides), as a queued check past its deadline is not
        enforced -> deadline - System.nanoTime() > 0
            ? backendAll(key, nearKey, enforced, cost, now, System.nanoTime(), deadline)
            : failedAll(key, enforced, cost, now),
        enforced -> failedAll(key, enforced, cost, now));
  }

  @Override
  public CompletionStage<MultiDecision> checkAllAsync(String key, List<Policy> policies, long cost) {
    CheckArguments.validateAll(key, policies, cost);
    List<Policy> ps = List.copyOf(policies);
    long now = nowMicros();
    long start = System.nanoTime();
    long deadline = start + timeoutNanos;
    String nearKey = nearKey(key);
    MultiDecision local = nearCache == null ? null : nearCache.answerAll(nearKey, ps, cost, now);
    CompletableFuture<Judged> first = local != null ? CompletableFuture.completedFuture(Judged.of(local, Source.NEAR_CACHE))
        : backendAllAsync(key, nearKey, ps, cost, now, start, deadline);
    return resolveAsync(ps, POLICY, first, deadline,
        enforced -> backendAllAsync(key, nearKey, enforced, cost, now, System.nanoTime(), deadline),
        enforced -> failedAll(key, enforced, cost, now));
  }

  /**
   * {@link #resolve} once {@code first} completes: when only shadow policies denied, the enforced
   * pairs again, from the same source ({@code againOnBackend}, or {@code failed} for the failure
   * mode's answer and once the deadline has passed), as checkAll does.
   */
  private <P> CompletionStage<MultiDecision> resolveAsync(List<P> pairs, Function<? super P, Policy> policyOf,
      CompletableFuture<Judged> first, long deadline, Function<List<P>, CompletableFuture<Judged>> againOnBackend,
      Function<List<P>, Judged> failed) {
    return first.thenCompose(judged -> {
      List<P> enforced = reports.rerunFor(pairs, policyOf, judged);
      if (enforced == null) {
        return CompletableFuture.completedFuture(reports.resolve(pairs, policyOf, judged, null, null));
      }
      // as checkAll: the enforced pairs again, from the same source, never past the deadline
      CompletableFuture<Judged> again = judged.source() == Source.FAILURE || judged.source() == Source.FALLBACK
          || deadline - System.nanoTime() <= 0
          ? CompletableFuture.completedFuture(failed.apply(enforced))
          : againOnBackend.apply(enforced);
      return again.thenApply(second -> reports.resolve(pairs, policyOf, judged, e -> second, e -> second));
    }).exceptionally(e -> { // never happens by design; should it, the caller must still get an answer
      calls.logError("checkAllAsync could not complete normally; FAIL_OPEN decides", e);
      List<Decision> open = new ArrayList<>(pairs.size());
      for (P p : pairs) {
        open.add(Reports.failOpen(policyOf.apply(p)));
      }
      return new MultiDecision(true, open);
    });
  }

  /** {@link #backendAll} without waiting: the stage completes when the backend answers or the deadline passes. */
  private CompletableFuture<Judged> backendAllAsync(String key, String nearKey, List<Policy> policies, long cost,
      long now, long start, long deadline) {
    return calls.callAsync(backendAllCall(key, nearKey, policies, cost, now), start, deadline)
        .thenApply(m -> judgedAll(m, key, policies, cost, now));
  }

  /**
   * The backend's all-or-nothing call for one key: through the near-cache (which learns from a
   * denial), else the backend's own async call, else its blocking one.
   */
  private Supplier<CompletionStage<MultiDecision>> backendAllCall(String key, String nearKey, List<Policy> policies,
      long cost, long now) {
    if (nearCache != null) {
      return () -> {
        long resets = nearCache.resets(nearKey);
        return BackendCalls.future(backend.executeAsync(new Command.CheckAll(key, policies, cost, now))).thenApply(e -> {
          nearCache.rememberAll(nearKey, policies, cost, now, e, resets);
          return e.decision();
        });
      };
    }
    return asyncCheck ? () -> backend.executeAsync(new Command.CheckAll(key, policies, cost, now))
            .thenApply(DefaultRateLimiter::decisionOf)
        : () -> CompletableFuture.completedFuture(decisionOf(backend.execute(new Command.CheckAll(key, policies, cost,
            now))));
  }

  /** The backend's answer, or the failure mode's when there is none (the call failed, or was skipped). */
  private Judged judgedAll(MultiDecision m, String key, List<Policy> policies, long cost, long now) {
    return m != null && m.decisions().size() == policies.size() ? Judged.of(m, Source.BACKEND)
        : failedAll(key, policies, cost, now);
  }

  // ---------------------------------------------------------------------------------- checkAll across keys

  /**
   * Pairs of one key are {@code checkAll(key, policies, cost)}, near-cache included; pairs of
   * different keys go to the backend's cross-key check without the near-cache (its entries are
   * per pair and learn from one key's denials; the backend stays the only truth).
   */
  @Override
  public MultiDecision checkAll(List<KeyedPolicy> checks, long cost) {
    CheckArguments.validateAcross(checks, cost);
    String key = KeyedPolicy.commonKey(checks);
    if (key != null) {
      return checkAll(key, KeyedPolicy.policies(checks), cost);
    }
    requireAcrossKeys();
    List<KeyedPolicy> cs = List.copyOf(checks);
    long now = nowMicros();
    long start = System.nanoTime();
    long deadline = start + timeoutNanos;
    return reports.resolve(cs, PAIR_POLICY, backendAcross(cs, cost, now, start, deadline),
        // as checkAll(key, ...): not sent again once the first call has used the whole timeout
        enforced -> deadline - System.nanoTime() > 0
            ? backendAcross(enforced, cost, now, System.nanoTime(), deadline)
            : failedAcross(enforced, cost, now),
        enforced -> failedAcross(enforced, cost, now));
  }

  @Override
  public CompletionStage<MultiDecision> checkAllAsync(List<KeyedPolicy> checks, long cost) {
    CheckArguments.validateAcross(checks, cost);
    String key = KeyedPolicy.commonKey(checks);
    if (key != null) {
      return checkAllAsync(key, KeyedPolicy.policies(checks), cost);
    }
    requireAcrossKeys();
    List<KeyedPolicy> cs = List.copyOf(checks);
    long now = nowMicros();
    long start = System.nanoTime();
    long deadline = start + timeoutNanos;
    return resolveAsync(cs, PAIR_POLICY, backendAcrossAsync(cs, cost, now, start, deadline), deadline,
        enforced -> backendAcrossAsync(enforced, cost, now, System.nanoTime(), deadline),
        enforced -> failedAcross(enforced, cost, now));
  }

  /** A backend without cross-key checks is a configuration error, not a failure for the failure mode. */
  private void requireAcrossKeys() {
    if (!checksAcrossKeys) {
      throw new UnsupportedOperationException("the backend " + backend.getClass().getName()
          + " does not check pairs of different keys together (its checksAcrossKeys() is false); check one key"
          + " at a time with checkAll(key, policies, cost)");
    }
  }

  /** The backend's all-or-nothing answer for pairs of different keys, or the failure mode's. */
  private Judged backendAcross(List<KeyedPolicy> checks, long cost, long now, long start, long deadline) {
    MultiDecision m = calls.call(() -> across(checks, cost, now), start, deadline);
    return m != null && m.decisions().size() == checks.size() ? Judged.of(m, Source.BACKEND)
        : failedAcross(checks, cost, now);
  }

  /** {@link #backendAcross} without waiting. */
  private CompletableFuture<Judged> backendAcrossAsync(List<KeyedPolicy> checks, long cost, long now, long start,
      long deadline) {
    CompletableFuture<MultiDecision> m = calls.callAsync(() -> across(checks, cost, now), start, deadline);
    return m.thenApply(d -> d != null && d.decisions().size() == checks.size() ? Judged.of(d, Source.BACKEND)
        : failedAcross(checks, cost, now));
  }

  private Judged failedAcross(List<KeyedPolicy> checks, long cost, long now) {
    return failures.all(checks, PAIR_POLICY, () -> fallback.checkAll(checks, cost, now));
  }

  // ---------------------------------------------------------------------------------- peekAll

  @Override
  public MultiDecision peekAll(String key, List<Policy> policies, long cost) {
    CheckArguments.validateAll(key, policies, cost);
    List<Policy> ps = List.copyOf(policies);
    long now = nowMicros();
    long start = System.nanoTime();
    MultiDecision local = nearCache == null ? null : nearCache.answerAll(nearKey(key), ps, cost, now);
    Judged judged;
    if (local != null) {
      judged = Judged.of(local, Source.NEAR_CACHE); // a remembered denial: read-only, and exact
    } else {
      List<Decision> inspected = calls.call(() -> {
        List<Decision> ds = new ArrayList<>(ps.size());
        for (Policy p : ps) {
          ds.add(backend.execute(new Command.Inspect(key, p, cost, now)));
        }
        return CompletableFuture.completedFuture(ds);
      }, start, start + timeoutNanos);
      judged = inspected != null && inspected.size() == ps.size()
          ? new Judged(inspected.stream().allMatch(Decision::allowed), inspected.toArray(Decision[]::new), Source.BACKEND)
          : failures.peek(key, ps, cost, now);
    }
    return peeked(ps, judged);
  }

  /**
   * A peek's verdict: denied when a policy that is not a shadow one denies. A denied verdict is
   * reported as {@link #resolve} reports a check's; an allowed one is not (the charge reports it),
   * its shadow denials returned as allowed.
   */
  private MultiDecision peeked(List<Policy> policies, Judged judged) {
    Decision[] decisions = judged.decisions();
    boolean allowed = true;
    for (int i = 0; i < decisions.length; i++) {
      allowed &= decisions[i].allowed() || reports.isShadow(policies.get(i));
    }
    List<Decision> result = new ArrayList<>(decisions.length);
    for (int i = 0; i < decisions.length; i++) {
      Policy policy = policies.get(i);
      Decision d = decisions[i];
      if (allowed) {
        result.add(d.allowed() ? d : Decision.allowed(policy, d.remaining(), d.resetAfterMicros(), 0));
      } else {
        result.add(!d.allowed() && reports.isShadow(policy) ? reports.shadowed(policy, d, judged.source())
            : reports.report(policy, d, judged.source()));
      }
    }
    return new MultiDecision(allowed, result);
  }

  /** The backend's all-or-nothing answer, or the failure mode's when it fails. */
  private Judged backendAll(String key, String nearKey, List<Policy> policies, long cost, long now, long start,
      long deadline) {
    MultiDecision m = nearCache == null && !asyncCheck ? checkAllDirectly(key, policies, cost, now, start)
        : calls.call(backendAllCall(key, nearKey, policies, cost, now), start, deadline);
    return judgedAll(m, key, policies, cost, now);
  }

  /** {@link #call} for a backend without its own checkAllAsync, with no future and no lambda. */
  private MultiDecision checkAllDirectly(String key, List<Policy> policies, long cost, long now, long start) {
    long permit = breaker.tryAcquire();
    if (permit == CircuitBreaker.REFUSED) {
      return null;
    }
    MultiDecision m = null;
    Throwable error = null;
    try {
      m = decisionOf(backend.execute(new Command.CheckAll(key, policies, cost, now)));
    } catch (RuntimeException e) {
      error = e;
    }
    return calls.settle(permit, start, m, error) ? m : null;
  }

  private Judged failedAll(String key, List<Policy> policies, long cost, long now) {
    return failures.all(policies, POLICY, () -> fallback.checkAll(key, policies, cost, now));
  }

  // ---------------------------------------------------------------------------------- reserve

  @Override
  public Reservation reserve(String key, List<Policy> policies, long estimate) {
    return reservations.reserve(key, policies, estimate);
  }

  @Override
  public CompletionStage<Reservation> reserveAsync(String key, List<Policy> policies, long estimate) {
    return reservations.reserveAsync(key, policies, estimate);
  }

  @Override
  public Reservation reserve(List<KeyedPolicy> checks, long estimate) {
    return reservations.reserveAcross(checks, estimate);
  }

  @Override
  public CompletionStage<Reservation> reserveAsync(List<KeyedPolicy> checks, long estimate) {
    return reservations.reserveAcrossAsync(checks, estimate);
  }

  @Override
  public Reservation resume(String key, List<Policy> policies, long estimate, List<dev.ratelimit.spi.Mark> marks) {
    return reservations.resume(key, policies, estimate, marks);
  }

  @Override
  public boolean takesReservations() {
    return backend.reserves();
  }

  @Override
  public long failedSettles() {
    return reservations.failedSettles();
  }

  // ---------------------------------------------------------------------------------- inspect, reset

  @Override
  public Decision inspect(String key, Policy policy) {
    CheckArguments.validate(key, policy, 1);
    return backend.execute(new Command.Inspect(key, policy, 1, nowMicros()));
  }

  @Override
  public void reset(String key, Policy policy) {
    CheckArguments.validate(key, policy, 1);
    long now = nowMicros();
    if (fallback != null) {
      fallback.reset(key, policy, now);
    }
    backend.execute(new Command.Reset(key, policy, now));
    if (nearCache != null) {
      nearCache.forget(Keys.bounded(key), policy, now); // after: a denial still in flight was sent before it and stays out
    }
  }

  @Override
  public void close() {
    try {
      backend.close();
    } finally {
      if (fallback != null) {
        fallback.close();
      }
    }
  }

  @Override
  public long nearCacheSize() {
    return nearCache == null ? 0 : nearCache.size();
  }

  @Override
  public FailureMode failureMode() {
    return failureMode;
  }

  @Override
  public RateLimitListener.CircuitState circuitState() {
    return breaker.state();
  }

  // ---------------------------------------------------------------------------------- backend calls

  /** The backend's answer; a denial's state teaches the near-cache. */
  private CompletionStage<Decision> evaluateAsync(String key, String nearKey, Policy policy, long cost, long now) {
    if (nearCache == null) {
      return backend.executeAsync(new Command.Check(key, policy, cost, now)).thenApply(DefaultRateLimiter::decisionOf);
    }
    long resets = nearCache.resets(nearKey);
    return BackendCalls.future(backend.executeAsync(new Command.Check(key, policy, cost, now))).thenApply(e -> {
      nearCache.remember(nearKey, policy, cost, now, e, resets);
      return e.decision();
    });
  }

  // ---------------------------------------------------------------------------------- decisions

  // ---------------------------------------------------------------------------------- helpers

  private long nowMicros() {
    if (manualClock != null) {
      return manualClock.epochMicros();
    }
    Instant now = clock.instant();
    return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
  }

}

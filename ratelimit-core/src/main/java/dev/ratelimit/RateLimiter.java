package dev.ratelimit;

import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.spi.Backend;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;

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
 * <p>A backend failure never escapes {@code check}, {@code checkAll} or {@code checkAsync}: when
 * the backend throws, fails the stage, takes longer than the {@link Builder#timeout(Duration)
 * timeout}, or is skipped by the open {@link Builder#circuitBreaker circuit breaker}, the {@link
 * FailureMode} decides, and the {@link Builder#listener listener} and a log line (at most one every
 * 10 s) report it. {@code inspect} and {@code reset} are for tools and tests: they call the backend
 * directly, without timeout, breaker or failure mode, and its exceptions reach the caller.
 */
public interface RateLimiter extends AutoCloseable {

  /** Checks one unit of {@code key} against {@code policy}, consuming it when allowed. */
  default Decision check(String key, Policy policy) {
    return check(key, policy, 1);
  }

  /**
   * Checks {@code cost} units of {@code key} against {@code policy}, consuming them when allowed.
   * Returns within the {@link Builder#timeout(Duration) timeout} (plus scheduling) when the backend
   * answers asynchronously, as remote backends do; never throws for a backend failure.
   *
   * @throws IllegalArgumentException for bad input (see the class comment)
   */
  Decision check(String key, Policy policy, long cost);

  /**
   * Whether one unit of {@code key} passes {@code policy}, consumed when the backend allows it:
   * {@link #check(String, Policy)}{@code .allowed()}, for callers that need only the answer.
   */
  default boolean tryAcquire(String key, Policy policy) {
    return tryAcquire(key, policy, 1);
  }

  /**
   * Whether {@code cost} units of {@code key} pass {@code policy}, consumed when the backend allows
   * them: {@link #check(String, Policy, long)}{@code .allowed()}, with the same validation, failure
   * mode, listener events and shadow policies (a shadow policy's denial is {@code true}; a failure
   * mode's answer is what it decides: {@code true} under FAIL_OPEN with nothing counted, {@code
   * false} under FAIL_CLOSED, the local decision under LOCAL_FALLBACK). The built-in limiter, when nothing needs the
   * decision (the in-memory backend; no listener, near-cache or shadow policies), answers without
   * building one.
   *
   * @throws IllegalArgumentException for bad input (see the class comment)
   */
  default boolean tryAcquire(String key, Policy policy, long cost) {
    return check(key, policy, cost).allowed();
  }

  /**
   * Checks {@code cost} units of {@code key} against every policy at once, in one round trip:
   * all consume, or none does. Each policy keeps its own state for the key. Bounded by the
   * timeout as {@link #check(String, Policy, long)} is. With {@link Builder#shadowPolicies shadow
   * policies} a denial by them alone costs a second round trip; see there.
   *
   * @throws IllegalArgumentException for bad input, an empty list, or two policies with the same
   *     name and algorithm
   */
  MultiDecision checkAll(String key, List<Policy> policies, long cost);

  /**
   * What {@link #checkAll checkAll(key, policies, cost)} would decide now, consuming nothing and
   * writing nothing: the check before work that is charged only after it, once its outcome is
   * known (to count only failed logins: {@code peekAll}, log in, then {@code checkAll} if it
   * failed). Unlike {@link #inspect}, it is made for the request path, as {@code checkAll} is:
   * bounded by the timeout and the circuit breaker, a backend failure never escapes (FAIL_OPEN
   * allows, FAIL_CLOSED denies, LOCAL_FALLBACK answers from the local state, consuming nothing),
   * and a shadow policy never denies. Each decision's {@code remaining} is what is available now,
   * as {@link #inspect}'s is; a denial's {@code retryAfter} is the exact wait for {@code cost}. A
   * denied answer is reported to the {@link Builder#listener listener} as {@code checkAll}'s
   * would be; an allowed one is not (the check that charges the work reports it).
   *
   * <p>Nothing is held between the peek and the charge: other callers may take the room meanwhile,
   * and a charge that finds none is denied and consumes nothing. So as many calls as peek at once
   * may all pass: up to that many minus one beyond the limit.
   *
   * <p>The default, for implementations other than the built one, answers from {@link #inspect}
   * (which throws what the backend throws): allowed when every policy's {@code remaining} covers
   * {@code cost}, a denial's wait at most the time until the state is fresh.
   *
   * @throws IllegalArgumentException for bad input, as {@link #checkAll}
   */
  default MultiDecision peekAll(String key, List<Policy> policies, long cost) {
    Require.argument(policies != null && !policies.isEmpty(), "policies must not be empty, was %s", policies);
    Require.argument(cost >= 1, "cost must be at least 1, was %s", cost);
    List<Decision> decisions = new ArrayList<>(policies.size());
    boolean allowed = true;
    for (Policy policy : policies) {
      Decision now = inspect(key, policy);
      if (cost > 1 && (!now.allowed() || now.remaining() < cost)) { // a cost-1 wait may be too short
        long wait = Math.max(now.retryAfterMicros(), now.resetAfterMicros());
        now = Decision.denied(policy, now.remaining(), wait, now.resetAfterMicros());
      }
      allowed &= now.allowed();
      decisions.add(now);
    }
    return new MultiDecision(allowed, decisions);
  }

  /**
   * The same as {@link #check(String, Policy, long)}, without blocking on a remote backend. The
   * stage always completes normally, at the latest when the timeout runs out (with the failure
   * mode's decision); bad input throws here, before a stage exists. It may complete on the remote
   * client's I/O thread (Redisson's), which then runs the stage's non-async continuations: keep
   * them short and non-blocking, or use the {@code ...Async} forms with an executor of your own.
   *
   * @throws IllegalArgumentException for bad input
   */
  CompletionStage<Decision> checkAsync(String key, Policy policy, long cost);

  /**
   * The same as {@link #checkAll(String, List, long)}, without blocking on a remote backend: what
   * a reactive application calls on an event-loop thread. The stage always completes normally, at
   * the latest when the timeout runs out (with the failure mode's decision); bad input throws here,
   * before a stage exists. It may complete on the remote client's I/O thread, as {@link
   * #checkAsync}'s does.
   *
   * <p>The default, for implementations other than the built one, calls {@link #checkAll} and so
   * blocks as it does.
   *
   * @throws IllegalArgumentException for bad input, as {@link #checkAll}
   */
  default CompletionStage<MultiDecision> checkAllAsync(String key, List<Policy> policies, long cost) {
    return java.util.concurrent.CompletableFuture.completedFuture(checkAll(key, policies, cost));
  }

  /**
   * Checks {@code cost} units of every (key, policy) pair at once, all or nothing: allowed only when
   * every pair allows, and then every pair consumed; when any pair denies, no pair consumed. What
   * a request that must pass several independent limits calls, each its own key (a tenant's, a
   * user's, a route's): the Envoy rate limit service's descriptors, for one. Each pair keeps the
   * state {@link #check(String, Policy, long) check(key, policy)} keeps; pairs of one key share it
   * as in {@link #checkAll(String, List, long)}. The decisions come in the order of {@code checks}.
   *
   * <p>As {@code checkAll(key, policies, cost)} in everything else: one backend call (one round
   * trip to Redis; see below for a Redis Cluster), bounded by the timeout and the circuit breaker,
   * a backend failure decided by the failure mode (LOCAL_FALLBACK checks the pairs all or nothing
   * in the local state), every pair's decision reported to the listener, and {@link
   * Builder#shadowPolicies shadow policies} never denying (when only shadow pairs denied, the
   * enforced pairs are checked again alone). The near-cache is not consulted for pairs of
   * different keys (the backend answers; it stays the only truth); when every pair has the same
   * key, this is {@code checkAll(key, policies, cost)}, near-cache and all.
   *
   * <p>The built-in backends are atomic across keys: the in-memory one locks every key involved, in
   * one global order; Redis runs one script over every pair's keys. In a Redis Cluster a script
   * cannot span hash slots: the pairs are grouped by slot, each group is one atomic call, and the
   * groups are checked one after another in the order of their first pair, stopping at the first
   * that denies; so it is all or nothing per slot only: a later slot's denial leaves an earlier
   * slot's consumption in place (list the pair most likely to deny first). See the Redis docs.
   *
   * <p>The default, for implementations other than the built one, calls {@link
   * #checkAll(String, List, long)} when every pair has the same key, and otherwise throws {@link
   * UnsupportedOperationException}.
   *
   * @throws IllegalArgumentException for an empty list, a null pair, the same pair twice (an equal
   *     key and a policy of the same name and algorithm), or a cost that one of the policies
   *     refuses (see the class comment)
   * @throws UnsupportedOperationException when the pairs have different keys and this limiter, or
   *     its backend, cannot check keys together (see {@link Backend#checksAcrossKeys()})
   */
  default MultiDecision checkAll(List<KeyedPolicy> checks, long cost) {
    KeyedPolicy.validate(checks);
    String key = KeyedPolicy.commonKey(checks);
    if (key == null) {
      throw new UnsupportedOperationException(getClass().getName()
          + " does not check pairs of different keys together; check them with the built-in limiter"
          + " (RateLimiter.builder()) or one key at a time with checkAll(key, policies, cost)");
    }
    return checkAll(key, KeyedPolicy.policies(checks), cost);
  }

  /**
   * The same as {@link #checkAll(List, long)}, without blocking on a remote backend, as {@link
   * #checkAllAsync(String, List, long)} is to {@code checkAll(key, policies, cost)}: the stage always
   * completes normally, at the latest when the timeout runs out; bad input throws here.
   *
   * <p>The default, for implementations other than the built one, calls {@link
   * #checkAllAsync(String, List, long)} when every pair has the same key, and otherwise throws
   * {@link UnsupportedOperationException}.
   *
   * @throws IllegalArgumentException for bad input, as {@link #checkAll(List, long)}
   * @throws UnsupportedOperationException as {@link #checkAll(List, long)}
   */
  default CompletionStage<MultiDecision> checkAllAsync(List<KeyedPolicy> checks, long cost) {
    KeyedPolicy.validate(checks);
    String key = KeyedPolicy.commonKey(checks);
    if (key == null) {
      throw new UnsupportedOperationException(getClass().getName()
          + " does not check pairs of different keys together; check them with the built-in limiter"
          + " (RateLimiter.builder()) or one key at a time with checkAllAsync(key, policies, cost)");
    }
    return checkAllAsync(key, KeyedPolicy.policies(checks), cost);
  }

  /**
   * Takes {@code estimate} units of {@code policy} now for work whose true cost is known only when
   * it ends; settle the {@link Reservation} with {@link Reservation#commit} or {@link
   * Reservation#cancel}. Decided exactly as {@code check(key, policy, estimate)} would be, and
   * reported and bounded by the failure mode as that check; a refused reservation takes nothing.
   *
   * @throws IllegalArgumentException for bad input, as {@link #check(String, Policy, long)}
   * @throws UnsupportedOperationException when the backend does not take reservations
   */
  default Reservation reserve(String key, Policy policy, long estimate) {
    return reserve(key, java.util.Collections.singletonList(policy), estimate);
  }

  /**
   * Takes {@code estimate} units of every policy of {@code key}, all or nothing, as {@link
   * #checkAll(String, List, long)} would; settled once for all of them. The default, for
   * implementations other than the built one, throws {@link UnsupportedOperationException}.
   *
   * @throws IllegalArgumentException for bad input, as {@link #checkAll(String, List, long)}
   * @throws UnsupportedOperationException when the backend does not take reservations
   */
  default Reservation reserve(String key, List<Policy> policies, long estimate) {
    throw new UnsupportedOperationException(getClass().getName() + " does not take reservations");
  }

  /**
   * Takes {@code estimate} units of every (key, policy) pair, all or nothing, as {@link
   * #checkAll(List, long)} would decide them; settled once for all of them (each pair gives back
   * or is charged by its own policy's rule). Pairs of one key are reserved as {@link
   * #reserve(String, List, long)}. On a Redis Cluster, pairs whose keys are in different hash slots
   * are not reserved (a reservation is never split): the failure mode decides, as for a check the
   * backend could not route. The default, for implementations other than the built one, reserves
   * pairs of one key and throws {@link UnsupportedOperationException} for others.
   *
   * @throws IllegalArgumentException for bad input, as {@link #checkAll(List, long)}
   * @throws UnsupportedOperationException when the backend does not take reservations, or not of
   *     different keys together ({@code Backend.checksAcrossKeys()} false)
   */
  default Reservation reserve(List<KeyedPolicy> checks, long estimate) {
    String key = KeyedPolicy.commonKey(checks);
    if (key == null) {
      throw new UnsupportedOperationException(getClass().getName() + " does not reserve pairs of different keys");
    }
    return reserve(key, KeyedPolicy.policies(checks), estimate);
  }

  /**
   * {@link #reserve(List, long)} without blocking a thread. The default, for implementations other
   * than the built one, reserves on the caller's thread.
   *
   * @throws IllegalArgumentException for bad input, at once, as {@link #reserve(List, long)}
   * @throws UnsupportedOperationException as {@link #reserve(List, long)}
   */
  default CompletionStage<Reservation> reserveAsync(List<KeyedPolicy> checks, long estimate) {
    return java.util.concurrent.CompletableFuture.completedFuture(reserve(checks, estimate));
  }

  /**
   * {@link #reserve(String, Policy, long)} without blocking a thread: the stage completes when the
   * backend answers, or with the failure mode's answer once the timeout has passed.
   *
   * @throws IllegalArgumentException for bad input, at once, as {@link #reserve}
   * @throws UnsupportedOperationException when the backend does not take reservations
   */
  default CompletionStage<Reservation> reserveAsync(String key, Policy policy, long estimate) {
    return reserveAsync(key, java.util.Collections.singletonList(policy), estimate);
  }

  /**
   * {@link #reserve(String, List, long)} without blocking a thread. The default, for
   * implementations other than the built one, reserves on the caller's thread.
   *
   * @throws IllegalArgumentException for bad input, at once, as {@link #reserve}
   * @throws UnsupportedOperationException when the backend does not take reservations
   */
  default CompletionStage<Reservation> reserveAsync(String key, List<Policy> policies, long estimate) {
    return java.util.concurrent.CompletableFuture.completedFuture(reserve(key, policies, estimate));
  }

  /**
   * A reservation made elsewhere (by another instance on the same backend, or before a decision
   * service's token crossed the network), to be settled here: its {@link Reservation#commit} and
   * {@link Reservation#cancel} give back or charge exactly as the original's would. Settle each
   * reservation once across every copy: the limiter cannot tell whether another copy was settled,
   * and two give-backs return its units twice. A mark whose state was reset, expired or lost since
   * returns nothing. Its decisions are not known here: each is allowed, with {@code remaining} -1.
   *
   * @param key the original's {@link Reservation#key}
   * @param policies the original's {@link Reservation#policies}, equal in every parameter
   * @param estimate the original's {@link Reservation#estimate}
   * @param marks the original's {@link Reservation#marks}, one per policy
   * @throws IllegalArgumentException for bad input, as {@link #reserve}, or when {@code marks} has
   *     not one element per policy
   * @throws UnsupportedOperationException when the backend does not take reservations (the
   *     default, for implementations other than the built one)
   */
  default Reservation resume(String key, List<Policy> policies, long estimate, List<dev.ratelimit.spi.Mark> marks) {
    throw new UnsupportedOperationException(getClass().getName() + " does not take reservations");
  }

  /**
   * Whether {@link #reserve} works here: true for the built limiter on a backend that takes
   * reservations (the in-memory and Redis ones do); false by default. What builds on
   * reservations ({@code count-when}, {@code countWhen}) asks it at configuration time.
   */
  default boolean takesReservations() {
    return false;
  }

  /**
   * The state of {@code key} now, as the decision a cost-1 check would get, consuming nothing and
   * writing nothing; {@code remaining} is what is available now. Calls the backend directly: a
   * backend failure is thrown to the caller, and the circuit breaker neither sees nor skips it.
   *
   * @throws RuntimeException whatever the backend throws
   */
  Decision inspect(String key, Policy policy);

  /**
   * Forgets {@code key}'s state under {@code policy}, in the backend and in the local fallback.
   * Calls the backend directly, as {@link #inspect} does.
   *
   * @throws RuntimeException whatever the backend throws
   */
  void reset(String key, Policy policy);

  /**
   * How many hot denied (key, policy) pairs the near-cache holds now (approximate); 0 when it is
   * off. For metrics.
   */
  default long nearCacheSize() {
    return 0;
  }

  /**
   * How many reservation settles (a commit or a cancel) could not reach the backend since the
   * limiter was built; their units stayed as they were (a cancel's not given back, a commit's
   * difference not charged). Each is also logged (at most once every 10 s) and reported to the
   * listener as a backend error. 0 by default. For metrics.
   */
  default long failedSettles() {
    return 0;
  }

  /**
   * What decides while the backend cannot answer ({@link Builder#failureMode}); for health checks.
   * {@link FailureMode#FAIL_CLOSED} for an implementation that does not say, the cautious reading.
   */
  default FailureMode failureMode() {
    return FailureMode.FAIL_CLOSED;
  }

  /**
   * The state of the {@link Builder#circuitBreaker circuit breaker} now; for health checks.
   * {@link RateLimitListener.CircuitState#CLOSED CLOSED} for an implementation without one.
   */
  default RateLimitListener.CircuitState circuitState() {
    return RateLimitListener.CircuitState.CLOSED;
  }

  /** Closes the backend and the local fallback. */
  @Override
  void close();

  /** A limiter on the system clock and a fresh in-memory backend with default bounds. */
  static RateLimiter inMemory() {
    return builder().build();
  }

  /**
   * A builder; defaults: system clock, in-memory backend, {@link FailureMode#FAIL_OPEN}, a 250 ms
   * timeout, a circuit breaker of 5 failures whose probes of an outage start after 100 ms and wait
   * at most 5 s apart, no listener, no shadow mode.
   */
  static Builder builder() {
    return new Builder();
  }

  /**
   * Configures a {@link RateLimiter}. Not thread-safe; {@link #build()} copies what it holds.
   *
   * <pre>{@code
   * RateLimiter limiter = RateLimiter.builder()
   *     .backend(redisBackend)
   *     .timeout(Duration.ofMillis(150))                 // per check, default 250 ms
   *     .failureMode(FailureMode.LOCAL_FALLBACK)         // what a failure or a timeout decides
   *     .localFallbackShare(0.25)                        // this instance's share of each limit
   *     .circuitBreaker(5, Duration.ofSeconds(5))        // default: probes from 100 ms, at most 5 s apart
   *     .shadowPolicies(Set.of("new-login-limit"))       // counted, reported, never blocking
   *     .listener(metrics)
   *     .build();
   * }</pre>
   */
  final class Builder {
    /** The longest timeout or cool-down a builder takes: a day (longer ones overflow nanosecond timers). */
    static final Duration LONGEST = Duration.ofDays(1);
    /** The default {@link #timeout(Duration) timeout}: 250 ms. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(250);
    /** The default {@link #failClosedRetryAfter(Duration) FAIL_CLOSED retryAfter}: 1 s. */
    public static final Duration DEFAULT_FAIL_CLOSED_RETRY_AFTER = Duration.ofSeconds(1);
    /** The default {@link #circuitBreaker(int, Duration) failure threshold}: 5 failures in a row. */
    public static final int DEFAULT_FAILURE_THRESHOLD = 5;
    /** The default {@link #nearCacheMaximumEntries near-cache bound}: 10,000 entries. */
    public static final long DEFAULT_NEAR_CACHE_MAXIMUM_ENTRIES = 10_000;
    /** The default {@link #circuitBreaker(int, Duration) cool-down}, the longest interval between probes: 5 s. */
    public static final Duration DEFAULT_COOL_DOWN = Duration.ofSeconds(5);

    private InstantSource clock = InstantSource.system();
    private Backend backend;
    private Boolean nearCache;
    private long nearCacheMaximumEntries = DEFAULT_NEAR_CACHE_MAXIMUM_ENTRIES;
    private FailureMode failureMode = FailureMode.FAIL_OPEN;
    private Duration timeout = DEFAULT_TIMEOUT;
    private Duration failClosedRetryAfter = DEFAULT_FAIL_CLOSED_RETRY_AFTER;
    private double localFallbackShare = 1.0;
    private int failureThreshold = DEFAULT_FAILURE_THRESHOLD;
    private Duration coolDown = DEFAULT_COOL_DOWN;
    private final List<RateLimitListener> listeners = new ArrayList<>();
    private boolean shadow;
    private Set<String> shadowPolicies = Set.of();
    private LongSupplier nanoTime = System::nanoTime;

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
     * Whether to answer hot denied keys from a local near-cache (see the README): a denial stays a
     * denial for any cost at least as large until its retryAfter, and is answered locally with the
     * exact decision the backend would give. Default: on for a remote backend
     * ({@link Backend#isRemote()}, e.g. Redis), off for the in-memory one.
     */
    public Builder nearCache(boolean nearCache) {
      this.nearCache = nearCache;
      return this;
    }

    /**
     * The most hot denied (key, policy) pairs the near-cache holds at once; default {@value
     * #DEFAULT_NEAR_CACHE_MAXIMUM_ENTRIES}. Beyond it the least useful entries go (Caffeine's
     * W-TinyLFU) and their keys' checks reach the backend again: never a wrong answer, only fewer
     * local ones. Each entry is a denial's state snapshot (about 100 bytes; a sliding log's up to
     * 256 timestamps).
     *
     * @throws IllegalArgumentException when {@code maximumEntries < 1}
     */
    public Builder nearCacheMaximumEntries(long maximumEntries) {
      Require.argument(maximumEntries >= 1,
          "nearCacheMaximumEntries must be at least 1 (turn the near-cache off with nearCache(false)), was %s",
          maximumEntries);
      this.nearCacheMaximumEntries = maximumEntries;
      return this;
    }

    /**
     * What a backend failure decides: an exception, a call that outlives the {@link
     * #timeout(Duration) timeout}, or a call skipped while the {@link #circuitBreaker circuit} is
     * open. Default {@link FailureMode#FAIL_OPEN}.
     */
    public Builder failureMode(FailureMode failureMode) {
      this.failureMode = Objects.requireNonNull(failureMode, "failureMode");
      return this;
    }

    /**
     * How long one {@code check}, {@code checkAll} or {@code checkAsync} waits for the backend,
     * default 250 ms; then the failure mode decides. The whole call is bounded, including the
     * second backend call that shadow mode may make in {@code checkAll}. Keep a remote backend's
     * own timeout (such as {@code RedisBackend.Builder.timeout}) at or below this one. A call the
     * limiter stopped waiting for may still complete in the backend (and count there); it is
     * never sent again.
     *
     * @throws IllegalArgumentException unless positive and at most a day
     */
    public Builder timeout(Duration timeout) {
      Require.argument(timeout != null && !timeout.isNegative() && !timeout.isZero(),
          "timeout must be positive, was %s", timeout);
      Require.argument(timeout.compareTo(LONGEST) <= 0,
          "timeout must be at most a day (%s), was %s: a check waits that long at most", LONGEST, timeout);
      this.timeout = timeout;
      return this;
    }

    /**
     * The {@code retryAfter} (and {@code resetAfter}) of a {@link FailureMode#FAIL_CLOSED} denial,
     * default 1 s; with {@link FailureMode#LOCAL_FALLBACK}, also of a local denial of a cost above
     * the local share's capacity.
     *
     * @throws IllegalArgumentException unless positive
     */
    public Builder failClosedRetryAfter(Duration retryAfter) {
      Require.argument(retryAfter != null && !retryAfter.isNegative() && !retryAfter.isZero(),
          "failClosedRetryAfter must be positive, was %s", retryAfter);
      this.failClosedRetryAfter = retryAfter;
      return this;
    }

    /**
     * This instance's share of every limit while {@link FailureMode#LOCAL_FALLBACK} decides, in
     * (0, 1], default 1: each policy's limit and burst are multiplied by {@code share} and rounded
     * up, to at least 1. With {@code n} instances behind a shared backend, {@code 1.0 / n} keeps
     * the total near the shared limit during an outage. A cost above a scaled capacity is denied
     * (never an exception) with {@code retryAfter} = {@link #failClosedRetryAfter}.
     *
     * @throws IllegalArgumentException unless {@code 0 < share <= 1}
     */
    public Builder localFallbackShare(double share) {
      Require.argument(share > 0 && share <= 1, "localFallbackShare must be in (0, 1], was %s", share);
      this.localFallbackShare = share;
      return this;
    }

    /**
     * The circuit breaker around the backend, default 5 failures and 5 s. After {@code
     * failureThreshold} failures in a row (exceptions or timeouts) it opens: calls skip the
     * backend and the failure mode decides; after a probe interval one call probes the backend
     * while the others still skip it; the probe's success closes the circuit, its failure opens it
     * again for twice the interval. The first interval of an outage is 100 ms, and it doubles after
     * each failed probe up to {@code coolDown}, the longest interval: after a restart of Redis,
     * decisions come from it again within about as long as the outage lasted (and at most {@code
     * coolDown}); during a long outage the backend sees one probe per {@code coolDown} from each
     * limiter. (Before, {@code coolDown} was the one fixed interval; the name stays.) A {@code
     * coolDown} under 100 ms is also the first interval. It measures real time ({@link
     * System#nanoTime()}), not the limiter's clock. {@code failureThreshold = 0} disables it
     * ({@code coolDown} is then ignored).
     *
     * @throws IllegalArgumentException if {@code failureThreshold < 0}, or it is positive and
     *     {@code coolDown} is not
     */
    public Builder circuitBreaker(int failureThreshold, Duration coolDown) {
      Require.argument(failureThreshold >= 0,
          "failureThreshold must be at least 0 (0 disables the breaker), was %s", failureThreshold);
      Require.argument(failureThreshold == 0
              || (coolDown != null && !coolDown.isNegative() && !coolDown.isZero()),
          "coolDown must be positive, was %s", coolDown);
      Require.argument(failureThreshold == 0 || coolDown.compareTo(LONGEST) <= 0,
          "coolDown must be at most a day (%s), was %s", LONGEST, coolDown);
      this.failureThreshold = failureThreshold;
      this.coolDown = failureThreshold == 0 ? DEFAULT_COOL_DOWN : coolDown;
      return this;
    }

    /**
     * Adds a listener for decisions, backend calls and errors, and circuit changes (metrics, logs);
     * default none. Called repeatedly, every listener is called, in the order added. A listener
     * runs on the checking thread (for {@code checkAsync}, on the thread that completes its stage)
     * and must be fast; one that throws is logged and skipped, never failing a check.
     *
     * <p>{@link RateLimitListener#onDecision onDecision} is called once per policy of every
     * decision, with the outcome of that policy's decision as returned: in a denied {@code
     * checkAll}, a policy that alone would have passed reports {@code ALLOWED} (nothing was
     * consumed) and the denying ones {@code DENIED}. {@link RateLimitListener#onBackendCall
     * onBackendCall} is called once per backend call that was made (not for calls the open
     * circuit skipped), {@link RateLimitListener#onBackendError onBackendError} for each failed
     * one (a timeout is a {@link java.util.concurrent.TimeoutException}).
     */
    public Builder listener(RateLimitListener listener) {
      this.listeners.add(Objects.requireNonNull(listener, "listener"));
      return this;
    }

    /**
     * Shadow mode for every policy (dark launch), default false: checks run and count in the
     * backend as usual, but a denial never blocks. See {@link #shadowPolicies(Set)} for what a
     * shadowed denial returns.
     */
    public Builder shadow(boolean shadow) {
      this.shadow = shadow;
      return this;
    }

    /**
     * The names of the policies in shadow mode (dark launch); replaces any earlier set, default
     * none. The backend check runs and counts as usual, but a denial by a shadow policy (by the
     * backend, the local fallback, or {@code FAIL_CLOSED}) does not block:
     * <ul>
     *   <li>its decision is returned allowed, with {@code retryAfter} and {@code delay} zero,
     *       {@code remaining} and {@code resetAfter} as the denial said (so {@code remaining} is
     *       what is actually left, usually 0; -1, degraded, when {@code FAIL_CLOSED} denied);
     *       nothing was consumed for it;</li>
     *   <li>the listener gets {@link RateLimitListener.Outcome#SHADOW_DENIED}, and a line is
     *       logged at INFO at most once a minute per policy;</li>
     *   <li>in {@code checkAll}, shadow policies' denials do not count for the verdict. Since a
     *       backend's {@code checkAll} is all or nothing, a shadow denial means the enforced
     *       policies consumed nothing: when only shadow policies denied, the limiter makes a
     *       second {@code checkAll} with the enforced policies alone (same {@code now}, within
     *       the same timeout), and its answer is the verdict. Shadow policies that would have
     *       passed alone are not charged then, exactly as if their sibling were enforced.</li>
     * </ul>
     *
     * @throws IllegalArgumentException if a name is null or blank
     */
    public Builder shadowPolicies(Set<String> policyNames) {
      Require.argument(policyNames != null, "shadowPolicies must not be null");
      for (String name : policyNames) {
        Require.argument(name != null && !name.isBlank(), "shadow policy name must not be blank, was '%s'", name);
      }
      this.shadowPolicies = Set.copyOf(policyNames);
      return this;
    }

    /** The nanosecond source of the circuit breaker and of log throttling; tests replace it. */
    Builder nanoTime(LongSupplier nanoTime) {
      this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
      return this;
    }

    /** A new limiter with this configuration. */
    public RateLimiter build() {
      Backend b = backend != null ? backend : InMemoryBackend.create();
      boolean near = nearCache != null ? nearCache : b.isRemote();
      return new DefaultRateLimiter(new DefaultRateLimiter.Settings(clock, b, failureMode, near, nearCacheMaximumEntries,
          timeout, failClosedRetryAfter, localFallbackShare, failureThreshold, coolDown,
          Listeners.of(List.copyOf(listeners)), shadow, shadowPolicies, nanoTime));
    }
  }
}

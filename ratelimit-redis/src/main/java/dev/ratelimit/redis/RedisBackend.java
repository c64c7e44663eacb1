package dev.ratelimit.redis;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.KeyedPolicy;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.Require;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.spi.Command;
import dev.ratelimit.spi.Evaluation;
import dev.ratelimit.spi.MultiEvaluation;
import dev.ratelimit.spi.NotRoutedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;

/**
 * The Redis backend: every check is one atomic Lua script, run with {@code EVALSHA} through
 * Redisson, so that any number of application instances share one limit without races.
 *
 * <pre>{@code
 * RedissonClient redisson = Redisson.create(config);          // yours; the backend never closes it
 * RateLimiter limiter = RateLimiter.builder()
 *     .backend(RedisBackend.builder(redisson).keyPrefix("rl").timeout(Duration.ofMillis(200)).build())
 *     .build();
 * }</pre>
 *
 * <ul>
 *   <li>One script per algorithm and one for {@link #checkAll}, loaded once on every node; after a
 *       {@code NOSCRIPT} (restart, failover, {@code SCRIPT FLUSH}) the script is loaded again and
 *       the check retried, once: a NOSCRIPT check never ran, so nothing is counted twice.</li>
 *   <li>A script is never resent after a response timeout (Redisson would resend it by default,
 *       and count it twice): each call has no retries and the backend's own timeout. A timed-out
 *       check is an exception for the limiter's failure mode, never a denial.</li>
 *   <li>Keys are {@code prefix:{key}:policy:algorithm[:seq]}; all keys of a check share the
 *       hash tag, so Redis Cluster works; every key has a TTL that ends when its state stops
 *       mattering; denied checks write nothing. A check across keys ({@link #checkAll(List, long,
 *       long)}) carries each key's tag: one call on a single server, one per hash slot in a
 *       Cluster.</li>
 *   <li>Time comes from the limiter's clock ({@code now} in every call): keep instances on NTP; or
 *       {@link Builder#serverTime(boolean)} decides at Redis's clock.</li>
 *   <li>Natural batching (on by default, {@link Builder#batching(boolean)}): while fewer than
 *       {@link Builder#batchesInFlight(int) batchesInFlight} calls are in flight to a server (to a
 *       hash slot in a Cluster), a single-policy check goes out at once, alone; checks that arrive
 *       meanwhile go out together when a call returns, as one {@code EVALSHA} that runs each, in
 *       arrival order, with the very code of the single-check script and returns each its own
 *       reply. Each check stays atomic, is applied once and gets the decision it would have got
 *       alone; a batch is never resent, and when it fails or times out each of its checks fails. A
 *       check found still queued half the backend's timeout after it arrived fails unsent (sent
 *       that late, Redis could run it after the limiter gave up on it, and count it).
 *       {@code inspect} batches like a check, and so does {@code checkAll} (of one policy, as that
 *       policy's check; of several, as {@code check_all.lua}'s call in the batch); {@code reset}
 *       keeps its own call.</li>
 *   <li>Topology changes (docs/redis.md): a check refused with {@code MOVED} or {@code ASK} for a
 *       node the client has not discovered yet, or with {@code TRYAGAIN} (its keys split by a
 *       migration), never ran, and fails as {@link NotRoutedException}
 *       (the failure mode decides it; the limiter's circuit breaker does not count it). With
 *       {@link Builder#waitForReplicas waitForReplicas}, a check is answered once replicas hold its
 *       writes, so a failover to one of them loses no admission.</li>
 * </ul>
 */
public final class RedisBackend implements Backend {
  /** The default key prefix. */
  public static final String DEFAULT_PREFIX = "rl";
  /** The default per-call timeout. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(200);
  /** The default most checks in one batch. */
  public static final int DEFAULT_MAX_BATCH = 128;
  /** The default calls in flight per server (per hash slot in a Cluster) before checks batch. */
  public static final int DEFAULT_BATCHES_IN_FLIGHT = 2;

  private final RedissonClient client;
  private final ScriptCalls calls;
  private final RedisKeys keys;
  private final Map<Algorithm, Lua> check = new EnumMap<>(Algorithm.class);
  private final Lua checkAll;
  private final Lua checkBatch;
  private final Lua reserveScript;
  private final Lua settleScript;
  /** reservation_batch.lua; null when batching is off. */
  private final Lua reservationBatch;
  private final RedisReservations reservations;
  private final boolean serverTime;
  /** Batches single-policy checks; null when batching is off. */
  private final Dispatcher dispatcher;
  private final long timeoutNanos;
  /** Whether the client is configured for a Redis Cluster: a cross-key check then goes out per hash slot. */
  private final boolean cluster;

  private RedisBackend(Builder builder) {
    Require.argument(builder.waitReplicas == 0 || builder.waitTimeout.compareTo(builder.timeout) < 0,
        "waitForReplicas timeout (%s) must be shorter than the backend's timeout (%s): the call waits for both",
        builder.waitTimeout, builder.timeout);
    this.client = builder.client;
    this.keys = new RedisKeys(builder.keyPrefix);
    this.serverTime = builder.serverTime;
    Scripts scripts = new Scripts();
    for (Algorithm algorithm : Algorithm.values()) {
      check.put(algorithm, new Lua(scripts.check(algorithm)));
    }
    this.checkAll = new Lua(scripts.checkAll());
    this.checkBatch = new Lua(scripts.checkBatch());
    this.calls = new ScriptCalls(client, builder.timeout, builder.waitReplicas, builder.waitTimeout, checkAll, checkBatch);
    this.reserveScript = new Lua(scripts.reserve());
    this.settleScript = new Lua(scripts.settle());
    this.reservationBatch = builder.maxBatch < 2 ? null : new Lua(scripts.reservationBatch());
    this.reservations = new RedisReservations(calls, keys, serverTime, client.getConfig().isClusterConfig(),
        reserveScript, settleScript, builder.timeout, reservationBatch, builder.maxBatch, builder.batchesInFlight);
    this.timeoutNanos = builder.timeout.toNanos();
    this.cluster = client.getConfig().isClusterConfig();
    this.dispatcher = builder.maxBatch < 2 ? null : new Dispatcher(new Dispatcher.Sender() {
      @Override
      public CompletionStage<List<Object>> one(Dispatcher.Check c) {
        return calls.evalAsync(c.lua(), c.keys(), c.args());
      }

      @Override
      public CompletionStage<String> batch(List<Dispatcher.Check> checks) {
        return evalBatch(checks);
      }
    }, builder.batchesInFlight, builder.maxBatch, client.getConfig().isClusterConfig());
    if (builder.loadScripts) {
      warmUp();
    }
  }

  /**
   * Loads every script this backend runs into Redis ({@code SCRIPT LOAD}, on every master of a
   * Cluster), waiting for each reply within the backend's timeout: once it returns, Redis has
   * answered and the first checks pay neither for connecting nor for loading scripts. For
   * readiness checks at start-up (the Spring Boot starter holds readiness until it succeeds); a
   * backend built with {@link Builder#loadScriptsEagerly(boolean) loadScriptsEagerly(true)} (the
   * default) has already done it. Safe to call again; writes no key.
   *
   * @throws RuntimeException what the client throws when Redis cannot be reached or refuses
   */
  public void warmUp() {
    check.values().stream().distinct().forEach(calls::load);
    calls.load(checkAll);
    calls.load(reserveScript);
    calls.load(settleScript);
    if (dispatcher != null) {
      calls.load(checkBatch);
      calls.load(reservationBatch);
    }
  }

  /** A backend with the default prefix ({@value #DEFAULT_PREFIX}) and timeout (200 ms). */
  public static RedisBackend create(RedissonClient client) {
    return builder(client).build();
  }

  /**
   * The Lua source of the one-policy check script of {@code algorithm}, exactly as a backend loads
   * it (its SHA-1 is what the backend runs with {@code EVALSHA}): for diagnostics and benchmarks,
   * such as {@code redis-benchmark} running the script alone. ARGV: the algorithm's script name,
   * now (µs), cost, window (µs), limit, burst, apply ({@code 1}); KEYS: the policy's state keys.
   */
  public static String checkScript(Algorithm algorithm) {
    return new Scripts().check(Objects.requireNonNull(algorithm, "algorithm"));
  }

  /** A builder for a backend on {@code client}. */
  public static Builder builder(RedissonClient client) {
    return new Builder(client);
  }

  /** Runs {@code command}, waiting for Redis's reply within the backend's timeout. */
  @Override
  @SuppressWarnings("unchecked") // each command's answer is the type its record names
  public <R> R execute(Command<R> command) {
    if (command instanceof Command.Check c) {
      return (R) evaluate(c.key(), c.policy(), c.cost(), c.nowMicros());
    }
    if (command instanceof Command.CheckAll c) {
      return (R) evaluateAll(c.key(), c.policies(), c.cost(), c.nowMicros());
    }
    if (command instanceof Command.CheckAcross c) {
      return (R) checkAll(c.checks(), c.cost(), c.nowMicros());
    }
    if (command instanceof Command.Inspect c) {
      return (R) inspect(c.key(), c.policy(), c.cost(), c.nowMicros());
    }
    if (RedisReservations.handles(command)) {
      try {
        return executeAsync(command).toCompletableFuture().join();
      } catch (CompletionException e) {
        throw e.getCause() instanceof RuntimeException cause ? cause : e;
      }
    }
    Command.Reset c = (Command.Reset) command;
    reset(c.key(), c.policy(), c.nowMicros());
    return null;
  }

  /**
   * Runs {@code command} without blocking: checks go out as scripts (batched when several wait),
   * their replies decoded on Redisson's threads; an inspection or a reset waits on the caller's.
   */
  @Override
  @SuppressWarnings("unchecked")
  public <R> CompletionStage<R> executeAsync(Command<R> command) {
    if (command instanceof Command.Check c) {
      return (CompletionStage<R>) evaluateAsync(c.key(), c.policy(), c.cost(), c.nowMicros());
    }
    if (command instanceof Command.CheckAll c) {
      return (CompletionStage<R>) evaluateAllAsync(c.key(), c.policies(), c.cost(), c.nowMicros());
    }
    if (command instanceof Command.CheckAcross c) {
      return (CompletionStage<R>) checkAllAsync(c.checks(), c.cost(), c.nowMicros());
    }
    if (RedisReservations.handles(command)) {
      return reservations.execute(command);
    }
    try {
      return CompletableFuture.completedFuture(execute(command));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * True: reservations, each one script on the key's hash tag (reserve.lua, settle.lua), batched
   * among themselves as checks are (reservation_batch.lua), not with checks.
   */
  @Override
  public boolean reserves() {
    return true;
  }

  /** True: every check goes out without blocking a thread. */
  @Override
  public boolean isAsync() {
    return true;
  }

  /** True: on one server in one script; on a Cluster in one script per hash slot. */
  @Override
  public boolean checksAcrossKeys() {
    return true;
  }

  /** {@link Command.Check}'s decision, waited for. */
  public Decision check(String key, Policy policy, long cost, long nowMicros) {
    return evaluate(key, policy, cost, nowMicros).decision();
  }

  /** {@link Command.Check}'s decision, without blocking. */
  public CompletionStage<Decision> checkAsync(String key, Policy policy, long cost, long nowMicros) {
    return evaluateAsync(key, policy, cost, nowMicros).thenApply(Evaluation::decision);
  }

  /** {@link Command.CheckAll}'s decisions, waited for. */
  public MultiDecision checkAll(String key, List<Policy> policies, long cost, long nowMicros) {
    return evaluateAll(key, policies, cost, nowMicros).decision();
  }

  /** A check; a denial comes with the key's state, for the limiter's near-cache. */
  public Evaluation evaluate(String key, Policy policy, long cost, long nowMicros) {
    return evaluate(key, policy, cost, nowMicros, true);
  }

  private Evaluation evaluate(String key, Policy policy, long cost, long nowMicros, boolean apply) {
    List<Object> reply = evalCheck(check.get(policy.algorithm()), keys.of(key, policy),
        args(policy, nowMicros, cost, apply));
    return Replies.evaluation(policy, reply);
  }

  /** {@link Command.Check} without blocking; a denial comes with the key's state. */
  public CompletionStage<Evaluation> evaluateAsync(String key, Policy policy, long cost, long nowMicros) {
    return evalCheckAsync(check.get(policy.algorithm()), keys.of(key, policy), args(policy, nowMicros, cost, true))
        .thenApply(reply -> Replies.evaluation(policy, reply));
  }

  /** {@link Command.CheckAll}'s decisions, without blocking. */
  public CompletionStage<MultiDecision> checkAllAsync(String key, List<Policy> policies, long cost, long nowMicros) {
    return evaluateAllAsync(key, policies, cost, nowMicros).thenApply(MultiEvaluation::decision);
  }

  /**
   * A multi-policy check; a denial comes with every policy's state, for the near-cache. One policy
   * is a check (its script, its batching); several go out as one call of check_all.lua, batched
   * with other checks like a single check.
   */
  public MultiEvaluation evaluateAll(String key, List<Policy> policies, long cost, long nowMicros) {
    if (policies.size() == 1) {
      return Replies.asMulti(evaluate(key, policies.get(0), cost, nowMicros));
    }
    AllCall call = allCall(key, policies, cost, nowMicros);
    return Replies.multiEvaluation(policies, evalCheck(checkAll, call.keys(), call.args()));
  }

  /** {@link Command.CheckAll} without blocking; a denial comes with every policy's state. */
  public CompletionStage<MultiEvaluation> evaluateAllAsync(String key, List<Policy> policies, long cost,
      long nowMicros) {
    if (policies.size() == 1) {
      return evaluateAsync(key, policies.get(0), cost, nowMicros).thenApply(Replies::asMulti);
    }
    AllCall call = allCall(key, policies, cost, nowMicros);
    return evalCheckAsync(checkAll, call.keys(), call.args()).thenApply(reply -> Replies.multiEvaluation(policies, reply));
  }

  /** check_all.lua's KEYS and ARGV for one call. */
  private record AllCall(List<Object> keys, Object[] args) {}

  /**
   * check_all.lua's KEYS (every policy's keys, in order) and ARGV: t, cost, count, then per policy
   * one string: algorithm, window, limit, burst (see the script).
   */
  private AllCall allCall(String key, List<Policy> policies, long cost, long nowMicros) {
    List<Object> allKeys = new ArrayList<>(2 * policies.size());
    Object[] args = allArgs(policies.size(), cost, nowMicros);
    StringBuilder packed = new StringBuilder(64);
    for (int i = 0; i < policies.size(); i++) {
      addPolicy(allKeys, args, i, key, policies.get(i), packed);
    }
    return new AllCall(allKeys, args);
  }

  /** {@link #allCall} for (key, policy) pairs: the script takes each policy's keys as given, whatever their key. */
  private AllCall allCall(List<KeyedPolicy> checks, long cost, long nowMicros) {
    List<Object> allKeys = new ArrayList<>(2 * checks.size());
    Object[] args = allArgs(checks.size(), cost, nowMicros);
    StringBuilder packed = new StringBuilder(64);
    for (int i = 0; i < checks.size(); i++) {
      addPolicy(allKeys, args, i, checks.get(i).key(), checks.get(i).policy(), packed);
    }
    return new AllCall(allKeys, args);
  }

  private Object[] allArgs(int count, long cost, long nowMicros) {
    Object[] args = new Object[3 + count];
    args[0] = serverTime ? "server" : nowMicros;
    args[1] = cost;
    args[2] = count;
    return args;
  }

  private void addPolicy(List<Object> allKeys, Object[] args, int i, String key, Policy policy, StringBuilder packed) {
    allKeys.addAll(keys.of(key, policy));
    packed.setLength(0);
    packed.append(RedisKeys.scriptName(policy.algorithm())).append(' ').append(policy.windowMicros())
        .append(' ').append(policy.limit()).append(' ').append(policy.burst());
    args[3 + i] = packed.toString();
  }

  // ---------------------------------------------------------------------------------- across keys

  /**
   * A check of (key, policy) pairs of different keys, all or nothing: one call of check_all.lua
   * whose KEYS are every pair's keys in order (the script is the multi-policy one, unchanged: it
   * never assumes one key), batched like any check.
   *
   * <p>On a single server (or behind Sentinel) that is one atomic call whatever the keys' hash
   * tags. In a Redis Cluster a script cannot span hash slots: the pairs are grouped by slot (of
   * their key's hash tag), each group is one atomic call, and the groups go one after another, in
   * the order of their first pair in {@code checks}, without blocking; the first group that denies
   * ends the check: later groups are not charged (each of their pairs is evaluated without
   * consuming, for its decision), but earlier groups have consumed, and that stands. So in a
   * Cluster the check is all or nothing per hash slot only. (The limiter's shadow re-check, when
   * only a shadow pair of a later slot denied, charges the enforced pairs of earlier slots again:
   * list shadow pairs first.)
   */
  public MultiDecision checkAll(List<KeyedPolicy> checks, long cost, long nowMicros) {
    try {
      return checkAllAsync(checks, cost, nowMicros).toCompletableFuture().join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException cause) {
        throw cause;
      }
      throw e;
    }
  }

  /** {@link #checkAll(List, long, long)} without blocking the caller. */
  public CompletionStage<MultiDecision> checkAllAsync(List<KeyedPolicy> checks, long cost, long nowMicros) {
    if (!cluster) {
      return acrossOneCall(checks, cost, nowMicros);
    }
    int[][] groups = slotGroups(checks);
    if (groups.length == 1) {
      return acrossOneCall(checks, cost, nowMicros);
    }
    return slotBySlot(checks, groups, 0, new Decision[checks.size()], cost, nowMicros,
        System.nanoTime() + timeoutNanos / 2);
  }

  /**
   * The pairs as one atomic call of check_all.lua; one pair (a slot's only one) as its check, as
   * evaluateAll sends one policy (a batch takes a call of one policy for check.lua's).
   */
  private CompletionStage<MultiDecision> acrossOneCall(List<KeyedPolicy> checks, long cost, long nowMicros) {
    if (checks.size() == 1) {
      KeyedPolicy c = checks.get(0);
      return evaluateAsync(c.key(), c.policy(), cost, nowMicros)
          .thenApply(e -> new MultiDecision(e.decision().allowed(), List.of(e.decision())));
    }
    AllCall call = allCall(checks, cost, nowMicros);
    List<Policy> policies = new ArrayList<>(checks.size());
    for (KeyedPolicy check : checks) {
      policies.add(check.policy());
    }
    return evalCheckAsync(checkAll, call.keys(), call.args())
        .thenApply(reply -> Replies.multiEvaluation(policies, reply).decision());
  }

  /**
   * The indices of {@code checks} grouped by hash slot, the groups in the order of their first
   * pair, each group's pairs in their order.
   */
  static int[][] slotGroups(List<KeyedPolicy> checks, java.util.function.ToIntFunction<KeyedPolicy> slotOf) {
    int n = checks.size();
    int[] slot = new int[n];
    List<int[]> groups = new ArrayList<>();
    int[] sizes = new int[n];
    int[] groupOf = new int[n];
    for (int i = 0; i < n; i++) {
      slot[i] = slotOf.applyAsInt(checks.get(i));
      int g = -1;
      for (int j = 0; j < i; j++) {
        if (slot[j] == slot[i]) {
          g = groupOf[j];
          break;
        }
      }
      if (g < 0) {
        g = groups.size();
        groups.add(null);
      }
      groupOf[i] = g;
      sizes[g]++;
    }
    int[][] result = new int[groups.size()][];
    int[] filled = new int[groups.size()];
    for (int g = 0; g < result.length; g++) {
      result[g] = new int[sizes[g]];
    }
    for (int i = 0; i < n; i++) {
      result[groupOf[i]][filled[groupOf[i]]++] = i;
    }
    return result;
  }

  private int[][] slotGroups(List<KeyedPolicy> checks) {
    return slotGroups(checks, c -> RedisKeys.slot((String) keys.of(c.key(), c.policy()).get(0)));
  }

  /**
   * Group {@code g} and, when it allows, the next ones; a denial ends the chain (see {@link
   * #checkAll(List, long, long)}). A group not yet sent at {@code sendByNanos} (half the backend's
   * timeout after the check began, the batch queue's rule) fails unsent: sent that late, it could
   * consume after the limiter has given up on the check.
   */
  private CompletionStage<MultiDecision> slotBySlot(List<KeyedPolicy> checks, int[][] groups, int g,
      Decision[] decisions, long cost, long nowMicros, long sendByNanos) {
    if (g == groups.length) {
      return CompletableFuture.completedFuture(new MultiDecision(true, List.of(decisions)));
    }
    if (g > 0 && System.nanoTime() - sendByNanos > 0) {
      return CompletableFuture.failedFuture(new org.redisson.client.RedisTimeoutException("the check's hash slot "
          + (g + 1) + " of " + groups.length + " was not sent by half the backend's timeout; it was never sent"));
    }
    List<KeyedPolicy> group = new ArrayList<>(groups[g].length);
    for (int i : groups[g]) {
      group.add(checks.get(i));
    }
    return acrossOneCall(group, cost, nowMicros).thenCompose(m -> {
      for (int j = 0; j < groups[g].length; j++) {
        decisions[groups[g][j]] = m.decisions().get(j);
      }
      return m.allowed() ? slotBySlot(checks, groups, g + 1, decisions, cost, nowMicros, sendByNanos)
          : unchargedAfter(checks, groups, g + 1, decisions, cost, nowMicros);
    });
  }

  /**
   * The denied answer once group {@code from − 1} denied: the pairs of the later groups, which are
   * not charged, evaluated without consuming (each as its check alone would be decided now).
   */
  private CompletionStage<MultiDecision> unchargedAfter(List<KeyedPolicy> checks, int[][] groups, int from,
      Decision[] decisions, long cost, long nowMicros) {
    List<CompletableFuture<Void>> pending = new ArrayList<>();
    for (int g = from; g < groups.length; g++) {
      for (int i : groups[g]) {
        KeyedPolicy c = checks.get(i);
        pending.add(evalCheckAsync(check.get(c.policy().algorithm()), keys.of(c.key(), c.policy()),
            args(c.policy(), nowMicros, cost, false))
            .thenAccept(reply -> decisions[i] = Replies.decode(c.policy(), reply, 0)).toCompletableFuture());
      }
    }
    return CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new))
        .thenApply(done -> new MultiDecision(false, List.of(decisions)));
  }

  /** Redis is another process: limiters answer hot denied keys from their near-cache. */
  @Override
  public boolean isRemote() {
    return true;
  }

  /** {@link Command.Inspect} of a cost of 1. */
  public Decision inspect(String key, Policy policy, long nowMicros) {
    return inspect(key, policy, 1, nowMicros);
  }

  /** The check's script with {@code apply} off: the same arithmetic, nothing written. */
  public Decision inspect(String key, Policy policy, long cost, long nowMicros) {
    return evaluate(key, policy, cost, nowMicros, false).decision();
  }

  /** {@link Command.Reset}: deletes the keys of ({@code key}, {@code policy}). */
  public void reset(String key, Policy policy, long nowMicros) {
    client.getKeys().delete(keys.all(key, policy).toArray(String[]::new));
  }

  /** Does nothing: the {@link RedissonClient} belongs to the caller. */
  @Override
  public void close() {}

  /** check.lua's ARGV: algorithm, t or 'server', cost, window, limit, burst, apply. */
  private Object[] args(Policy policy, long nowMicros, long cost, boolean apply) {
    return new Object[] {RedisKeys.scriptName(policy.algorithm()), serverTime ? "server" : nowMicros, cost,
        policy.windowMicros(), policy.limit(), policy.burst(), apply ? "1" : "0"};
  }

  /** For tests: how many batches of reserves and settles went out. */
  long reservationBatchesSent() {
    return reservations.batchesSent();
  }

  /** For tests: whether checks of different hash slots may share a batch (batching, one server, no CROSSSLOT seen). */
  boolean batchesAcrossSlots() {
    return dispatcher != null && dispatcher.batchesAcrossSlots();
  }

  /** One single-policy check, through the dispatcher when batching, waited for. */
  private List<Object> evalCheck(Lua lua, List<Object> scriptKeys, Object[] args) {
    if (dispatcher == null) {
      return calls.eval(lua, scriptKeys, args);
    }
    try {
      return evalCheckAsync(lua, scriptKeys, args).toCompletableFuture().join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof RuntimeException cause) {
        throw cause;
      }
      throw e;
    }
  }

  /** One single-policy check: alone when idle, else with the next batch (see {@link Dispatcher}). */
  private CompletionStage<List<Object>> evalCheckAsync(Lua lua, List<Object> scriptKeys, Object[] args) {
    if (dispatcher == null) {
      return calls.evalAsync(lua, scriptKeys, args);
    }
    return dispatcher.submit(new Dispatcher.Check(lua, scriptKeys, args, System.nanoTime() + timeoutNanos / 2,
        new CompletableFuture<>()));
  }

  /** Several checks as one call of check_batch.lua (see {@link BatchCall}). */
  private CompletionStage<String> evalBatch(List<Dispatcher.Check> checks) {
    BatchCall call = BatchCall.of(checks, checkAll);
    return calls.evalAsync(checkBatch, RScript.ReturnType.VALUE, call.keys(), call.args());
  }

  /** Configures a {@link RedisBackend}. */
  public static final class Builder {
    private final RedissonClient client;
    private String keyPrefix = DEFAULT_PREFIX;
    private Duration timeout = DEFAULT_TIMEOUT;
    private boolean loadScripts = true;
    private boolean serverTime;
    private int maxBatch = DEFAULT_MAX_BATCH;
    private int batchesInFlight = DEFAULT_BATCHES_IN_FLIGHT;
    private int waitReplicas;
    private Duration waitTimeout = Duration.ZERO;

    private Builder(RedissonClient client) {
      this.client = Objects.requireNonNull(client, "client");
    }

    /**
     * The first part of every key, default {@value #DEFAULT_PREFIX}; not empty, and without
     * {@code { } :} or white space, so that it never shifts the hash tag.
     */
    public Builder keyPrefix(String keyPrefix) {
      Require.argument(keyPrefix != null && !keyPrefix.isEmpty() && RedisKeys.escape(keyPrefix).equals(keyPrefix),
          "keyPrefix must be non-empty without %% { } : # or white space, was '%s'", keyPrefix);
      this.keyPrefix = keyPrefix;
      return this;
    }

    /**
     * How long one call may wait for Redis, default 200 ms. A call that times out is a backend
     * error for the limiter's failure mode; it is never resent.
     */
    public Builder timeout(Duration timeout) {
      Require.argument(timeout != null && !timeout.isNegative() && !timeout.isZero(),
          "timeout must be positive, was %s", timeout);
      this.timeout = timeout;
      return this;
    }

    /**
     * Whether to load the scripts when the backend is built (default true); when false they are
     * loaded on first use, so a backend can be built while Redis is down.
     */
    public Builder loadScriptsEagerly(boolean loadScripts) {
      this.loadScripts = loadScripts;
      return this;
    }

    /**
     * Whether scripts decide at Redis's own clock ({@code TIME}) instead of the limiter's (default
     * false), for fleets whose clocks cannot be trusted. Every algorithm keeps its state in one key
     * (and SLIDING_LOG a sequence beside it), so a check needs no estimate of Redis's clock; each
     * reply carries the time it was decided at, which the near-cache follows.
     */
    public Builder serverTime(boolean serverTime) {
      this.serverTime = serverTime;
      return this;
    }

    /**
     * Whether single-policy checks that arrive while others are in flight go to Redis together
     * (default true): same as {@link #maxBatchSize(int) maxBatchSize}{@code (1)} when false, and
     * {@value RedisBackend#DEFAULT_MAX_BATCH} when true. See {@link RedisBackend} for what batching keeps.
     */
    public Builder batching(boolean batching) {
      this.maxBatch = batching ? DEFAULT_MAX_BATCH : 1;
      return this;
    }

    /**
     * The most checks sent together in one batch, default {@value RedisBackend#DEFAULT_MAX_BATCH}; 1 turns
     * batching off (every check is its own {@code EVALSHA}, as many in flight as callers).
     */
    public Builder maxBatchSize(int maxBatchSize) {
      Require.argument(maxBatchSize >= 1 && maxBatchSize <= 10_000,
          "maxBatchSize must be between 1 and 10000, was %s", maxBatchSize);
      this.maxBatch = maxBatchSize;
      return this;
    }

    /**
     * With batching, how many calls may be in flight at once per server (per hash slot in a
     * Cluster) before further checks wait for the next batch, default {@value
     * RedisBackend#DEFAULT_BATCHES_IN_FLIGHT}. Below it a check is sent at once, alone.
     */
    public Builder batchesInFlight(int batchesInFlight) {
      Require.argument(batchesInFlight >= 1 && batchesInFlight <= 1_000,
          "batchesInFlight must be between 1 and 1000, was %s", batchesInFlight);
      this.batchesInFlight = batchesInFlight;
      return this;
    }

    /**
     * Waits after each check that may write until {@code replicas} replicas of the master that ran
     * it acknowledged its writes (Redis {@code WAIT replicas timeout}, sent behind the script on the
     * same connection), default 0: no waiting. With asynchronous replication a replica promoted
     * after its master died may lack the master's last writes, and the limit forgets those
     * admissions; with {@code waitForReplicas(1, ...)} an admission is reported only once a replica
     * holds it, so a failover to that replica loses none. A check whose writes fewer replicas
     * acknowledged within {@code timeout} is a backend error for the limiter's failure mode (it ran
     * on the master, and counts there). Each consuming check then costs a replication round trip
     * more; see docs/redis.md for its measured cost.
     *
     * @param replicas how many replicas must acknowledge, 0 to turn waiting off
     * @param timeout how long Redis waits for them; shorter than {@link #timeout(Duration) timeout}
     */
    public Builder waitForReplicas(int replicas, Duration timeout) {
      Require.argument(replicas >= 0 && replicas <= 100, "waitForReplicas replicas must be between 0 and 100, was %s",
          replicas);
      Require.argument(replicas == 0 || (timeout != null && !timeout.isNegative() && !timeout.isZero()),
          "waitForReplicas timeout must be positive, was %s", timeout);
      this.waitReplicas = replicas;
      this.waitTimeout = replicas == 0 ? Duration.ZERO : timeout;
      return this;
    }

    /** A new backend. */
    public RedisBackend build() {
      return new RedisBackend(this);
    }
  }
}

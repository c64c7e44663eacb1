package dev.ratelimit.redis;

import dev.ratelimit.KeyedPolicy;
import dev.ratelimit.Policy;
import dev.ratelimit.spi.Command;
import dev.ratelimit.spi.Mark;
import dev.ratelimit.spi.MultiEvaluation;
import dev.ratelimit.spi.NotRoutedException;
import dev.ratelimit.spi.Reserved;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The Redis backend's reservations: {@link Command.Reserve} and {@link Command.ReserveAcross} as
 * one call of reserve.lua, their give-backs and charges as one call of settle.lua. One key's are on
 * its hash tag (Cluster-safe); pairs of different keys go in one call too, which a Cluster takes
 * only when their keys share a hash slot (else {@link NotRoutedException}: a reservation is never
 * split). The ledger keys are beside the states'. A settle with an identity ({@link
 * Command.GiveBack#settleId}) leaves a marker under it for ten times the timeout (10 s at least),
 * so that a retry of it is applied once. Reserves and settles batch among themselves as checks do
 * ({@link Dispatcher}, reservation_batch.lua): alone while few are in flight, together when more
 * wait.
 */
final class RedisReservations {
  private final ScriptCalls calls;
  private final RedisKeys keys;
  private final boolean serverTime;
  private final boolean cluster;
  private final Lua reserve;
  private final Lua settle;
  /** How long a settle's identity is kept: far longer than any retry of it can arrive after it. */
  private final long markerTtlMillis;
  private final long timeoutNanos;
  /** Batches reserves and settles as checks are batched; null when batching is off. */
  private final Dispatcher dispatcher;
  private final Lua batch;
  private final java.util.concurrent.atomic.LongAdder batches = new java.util.concurrent.atomic.LongAdder();

  /**
   * @param batch reservation_batch.lua; null to send each reserve and settle alone
   * @param maxBatch as the backend's batching of checks
   * @param batchesInFlight as the backend's batching of checks
   */
  RedisReservations(ScriptCalls calls, RedisKeys keys, boolean serverTime, boolean cluster, Lua reserve, Lua settle,
      Duration timeout, Lua batch, int maxBatch, int batchesInFlight) {
    this.calls = calls;
    this.keys = keys;
    this.serverTime = serverTime;
    this.cluster = cluster;
    this.reserve = reserve;
    this.settle = settle;
    this.markerTtlMillis = Math.max(10_000, 10 * timeout.toMillis());
    this.timeoutNanos = timeout.toNanos();
    this.batch = batch;
    this.dispatcher = batch == null ? null : new Dispatcher(new Dispatcher.Sender() {
      @Override
      public CompletionStage<List<Object>> one(Dispatcher.Check c) {
        return calls.evalAsync(c.lua(), c.keys(), c.args());
      }

      @Override
      public CompletionStage<String> batch(List<Dispatcher.Check> checks) {
        return sendBatch(checks);
      }
    }, batchesInFlight, maxBatch, cluster);
  }

  /** For tests: how many batches of reserves and settles went out. */
  long batchesSent() {
    return batches.sum();
  }

  /** One script call: alone when few are in flight, else with the next batch (see {@link Dispatcher}). */
  private CompletionStage<List<Object>> eval(Lua lua, List<Object> scriptKeys, Object[] args) {
    if (dispatcher == null) {
      return calls.evalAsync(lua, scriptKeys, args);
    }
    return dispatcher.submit(new Dispatcher.Check(lua, scriptKeys, args, System.nanoTime() + timeoutNanos / 2,
        new CompletableFuture<>()));
  }

  /** Several reserves and settles as one call of reservation_batch.lua. */
  private CompletionStage<String> sendBatch(List<Dispatcher.Check> checks) {
    StringBuilder lines = new StringBuilder();
    List<Object> allKeys = new ArrayList<>();
    List<Object> allArgs = new ArrayList<>();
    allArgs.add(null); // the lines, once known
    for (Dispatcher.Check c : checks) {
      lines.append(c.lua() == reserve ? 'r' : 's').append(' ').append(c.keys().size()).append(' ')
          .append(c.args().length).append('\n');
      allKeys.addAll(c.keys());
      allArgs.addAll(List.of(c.args()));
    }
    allArgs.set(0, lines.toString());
    batches.increment();
    return calls.evalAsync(batch, org.redisson.api.RScript.ReturnType.VALUE, allKeys, allArgs.toArray());
  }

  /** Whether {@code command} is one of the reservations' commands, which {@link #execute} runs. */
  static boolean handles(Command<?> command) {
    return command instanceof Command.Reserve || command instanceof Command.GiveBack
        || command instanceof Command.Charge || command instanceof Command.ReserveAcross
        || command instanceof Command.GiveBackAcross || command instanceof Command.ChargeAcross;
  }

  /** Runs a command {@link #handles} accepts, without blocking. */
  @SuppressWarnings("unchecked")
  <R> CompletionStage<R> execute(Command<R> command) {
    if (command instanceof Command.Reserve c) {
      return (CompletionStage<R>) reserve(pairs(c.key(), c.policies()), c.cost(), c.nowMicros(), c.ledger());
    }
    if (command instanceof Command.ReserveAcross c) {
      return (CompletionStage<R>) reserve(c.checks(), c.cost(), c.nowMicros(), c.ledger());
    }
    if (command instanceof Command.GiveBack c) {
      return (CompletionStage<R>) settle("give", pairs(c.key(), c.policies()), c.marks(), c.units(), c.nowMicros(),
          c.settleId());
    }
    if (command instanceof Command.GiveBackAcross c) {
      return (CompletionStage<R>) settle("give", c.checks(), c.marks(), c.units(), c.nowMicros(), c.settleId());
    }
    if (command instanceof Command.Charge c) {
      return (CompletionStage<R>) settle("charge", pairs(c.key(), c.policies()), null, c.units(), c.nowMicros(),
          c.settleId());
    }
    Command.ChargeAcross c = (Command.ChargeAcross) command;
    return (CompletionStage<R>) settle("charge", c.checks(), null, c.units(), c.nowMicros(), c.settleId());
  }

  /** reserve.lua: KEYS every pair's state keys then ledger keys; ARGV t, cost, count, ledger id, specs. */
  private CompletionStage<Reserved> reserve(List<KeyedPolicy> pairs, long cost, long nowMicros, long ledger) {
    int n = pairs.size();
    Object[] args = new Object[4 + n];
    args[0] = time(nowMicros);
    args[1] = cost;
    args[2] = n;
    args[3] = Long.toString(ledger);
    for (int i = 0; i < n; i++) {
      args[4 + i] = spec(pairs.get(i).policy());
    }
    List<Object> all = keysOf(pairs);
    if (all == null) {
      return notRouted();
    }
    List<Policy> policies = pairs.stream().map(KeyedPolicy::policy).toList();
    return eval(reserve, all, args).thenApply(reply -> reserved(policies, reply));
  }

  /** The reply: check_all.lua's, then when allowed per policy at, fraction, ledger id. */
  private static Reserved reserved(List<Policy> policies, List<Object> reply) {
    MultiEvaluation e = Replies.multiEvaluation(policies, reply);
    if (!e.decision().allowed()) {
      return new Reserved(e.decision(), List.of(), e.nowMicros());
    }
    int at = reply.size() - 3 * policies.size();
    List<Mark> marks = new ArrayList<>(policies.size());
    for (int i = 0; i < policies.size(); i++, at += 3) {
      marks.add(new Mark(Replies.number(reply, at), Replies.number(reply, at + 1),
          Long.parseLong(String.valueOf(reply.get(at + 2)))));
    }
    return new Reserved(e.decision(), marks, e.nowMicros());
  }

  /** settle.lua: KEYS every pair's state keys, ledger keys, then the marker; ARGV as the script says. */
  private CompletionStage<Void> settle(String mode, List<KeyedPolicy> pairs, List<Mark> marks, long units,
      long nowMicros, long settleId) {
    int n = pairs.size();
    Object[] args = new Object[6 + n];
    args[0] = mode;
    args[1] = time(nowMicros);
    args[2] = units;
    args[3] = n;
    for (int i = 0; i < n; i++) {
      Mark m = marks == null ? new Mark(0, 0, 0) : marks.get(i);
      args[4 + i] = spec(pairs.get(i).policy()) + ' ' + m.at() + ' ' + m.fraction() + ' ' + m.ledger();
    }
    args[4 + n] = Long.toString(settleId);
    args[5 + n] = markerTtlMillis;
    List<Object> all = keysOf(pairs);
    if (all == null) {
      return notRouted();
    }
    all.add(keys.settled(pairs.get(0).key(), pairs.get(0).policy(), settleId));
    return eval(settle, all, args).thenApply(reply -> null);
  }

  private static List<KeyedPolicy> pairs(String key, List<Policy> policies) {
    List<KeyedPolicy> pairs = new ArrayList<>(policies.size());
    for (Policy p : policies) {
      pairs.add(KeyedPolicy.of(key, p));
    }
    return pairs;
  }

  /**
   * Every pair's state keys, in order, then every pair's ledger key; null in a Cluster when they
   * are not all in one hash slot.
   */
  private List<Object> keysOf(List<KeyedPolicy> pairs) {
    List<Object> all = new ArrayList<>(3 * pairs.size() + 1);
    int slot = -1;
    String tagged = null; // the user key whose hash tag was last compared: one key's pairs share it
    for (KeyedPolicy p : pairs) {
      List<Object> state = keys.of(p.key(), p.policy());
      if (cluster && !p.key().equals(tagged)) {
        int s = RedisKeys.slot((String) state.get(0));
        if (slot >= 0 && s != slot) {
          return null;
        }
        slot = s;
        tagged = p.key();
      }
      all.addAll(state);
    }
    for (KeyedPolicy p : pairs) {
      all.add(keys.ledger(p.key(), p.policy()));
    }
    return all;
  }

  private static <T> CompletionStage<T> notRouted() {
    return CompletableFuture.failedFuture(new NotRoutedException("a reservation across keys in different hash slots"
        + " of a Redis Cluster is never split, so it was not made (the failure mode decides); on a Cluster, reserve"
        + " one key at a time, or reserve across keys on one Redis node or Sentinel", null));
  }

  private Object time(long nowMicros) {
    return serverTime ? "server" : nowMicros;
  }

  private static String spec(Policy p) {
    return RedisKeys.scriptName(p.algorithm()) + ' ' + p.windowMicros() + ' ' + p.limit() + ' ' + p.burst();
  }
}

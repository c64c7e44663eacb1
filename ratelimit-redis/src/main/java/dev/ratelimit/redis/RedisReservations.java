package dev.ratelimit.redis;

import dev.ratelimit.Policy;
import dev.ratelimit.spi.Command;
import dev.ratelimit.spi.Mark;
import dev.ratelimit.spi.MultiEvaluation;
import dev.ratelimit.spi.Reserved;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * The Redis backend's reservations: {@link Command.Reserve} as one call of reserve.lua, {@link
 * Command.GiveBack} and {@link Command.Charge} as one call of settle.lua, each on one key's hash
 * tag (Cluster-safe), the ledger keys beside the states'. A settle with an identity ({@link
 * Command.GiveBack#settleId}) leaves a marker under it for ten times the timeout (10 s at least),
 * so that a retry of it is applied once.
 */
final class RedisReservations {
  private final ScriptCalls calls;
  private final RedisKeys keys;
  private final boolean serverTime;
  private final Lua reserve;
  private final Lua settle;
  /** How long a settle's identity is kept: far longer than any retry of it can arrive after it. */
  private final long markerTtlMillis;

  RedisReservations(ScriptCalls calls, RedisKeys keys, boolean serverTime, Lua reserve, Lua settle,
      java.time.Duration timeout) {
    this.calls = calls;
    this.keys = keys;
    this.serverTime = serverTime;
    this.reserve = reserve;
    this.settle = settle;
    this.markerTtlMillis = Math.max(10_000, 10 * timeout.toMillis());
  }

  /** reserve.lua: KEYS every policy's state keys then ledger keys; ARGV t, cost, count, ledger id, specs. */
  CompletionStage<Reserved> reserve(Command.Reserve c) {
    List<Policy> policies = c.policies();
    int n = policies.size();
    Object[] args = new Object[4 + n];
    args[0] = time(c.nowMicros());
    args[1] = c.cost();
    args[2] = n;
    args[3] = Long.toString(c.ledger());
    for (int i = 0; i < n; i++) {
      args[4 + i] = spec(policies.get(i));
    }
    return calls.evalAsync(reserve, keysOf(c.key(), policies), args).thenApply(reply -> reserved(policies, reply));
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

  /** settle.lua, giving back. */
  CompletionStage<Void> giveBack(Command.GiveBack c) {
    return settle("give", c.key(), c.policies(), c.marks(), c.units(), c.nowMicros(), c.settleId());
  }

  /** settle.lua, charging. */
  CompletionStage<Void> charge(Command.Charge c) {
    return settle("charge", c.key(), c.policies(), null, c.units(), c.nowMicros(), c.settleId());
  }

  private CompletionStage<Void> settle(String mode, String key, List<Policy> policies, List<Mark> marks, long units,
      long nowMicros, long settleId) {
    int n = policies.size();
    Object[] args = new Object[6 + n];
    args[0] = mode;
    args[1] = time(nowMicros);
    args[2] = units;
    args[3] = n;
    for (int i = 0; i < n; i++) {
      Mark m = marks == null ? new Mark(0, 0, 0) : marks.get(i);
      args[4 + i] = spec(policies.get(i)) + ' ' + m.at() + ' ' + m.fraction() + ' ' + m.ledger();
    }
    args[4 + n] = Long.toString(settleId);
    args[5 + n] = markerTtlMillis;
    List<Object> all = keysOf(key, policies);
    all.add(keys.settled(key, policies.get(0), settleId));
    return calls.evalAsync(settle, all, args).thenApply(reply -> null);
  }

  /** Every policy's state keys, in order, then every policy's ledger key. */
  private List<Object> keysOf(String key, List<Policy> policies) {
    List<Object> all = new ArrayList<>(3 * policies.size());
    for (Policy p : policies) {
      all.addAll(keys.of(key, p));
    }
    for (Policy p : policies) {
      all.add(keys.ledger(key, p));
    }
    return all;
  }

  private Object time(long nowMicros) {
    return serverTime ? "server" : nowMicros;
  }

  private static String spec(Policy p) {
    return RedisKeys.scriptName(p.algorithm()) + ' ' + p.windowMicros() + ' ' + p.limit() + ' ' + p.burst();
  }
}

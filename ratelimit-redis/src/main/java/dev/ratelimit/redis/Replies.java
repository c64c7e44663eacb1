package dev.ratelimit.redis;

import dev.ratelimit.Decision;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.spi.Evaluation;
import dev.ratelimit.spi.MultiEvaluation;
import java.util.ArrayList;
import java.util.List;

/**
 * The decoder of the check scripts' replies, by position: the layout of each reply is written here
 * once, beside the scripts' own (check.lua, check_all.lua), and nowhere else.
 */
final class Replies {
  private Replies() {}

  /** A single check's evaluation as the multi-policy form. */
  static MultiEvaluation asMulti(Evaluation e) {
    Decision d = e.decision();
    return new MultiEvaluation(new MultiDecision(d.allowed(), List.of(d)),
        d.allowed() ? null : java.util.Collections.singletonList(e.state()), e.nowMicros());
  }

  /**
   * check_all.lua's reply: allowed (1/0), t, then per policy a decision (six numbers as above, the
   * state's length last) followed by that many state numbers.
   */
  static MultiEvaluation multiEvaluation(List<Policy> policies, List<Object> reply) {
    long t = number(reply, 1);
    boolean allowed = number(reply, 0) == 1;
    List<Decision> decisions = new ArrayList<>(policies.size());
    List<long[]> states = allowed ? null : new ArrayList<>(policies.size());
    int at = 2;
    for (Policy policy : policies) {
      decisions.add(decode(policy, reply, at));
      if (states != null) {
        states.add(state(reply, at + 5));
      }
      at += 6 + (int) Math.max(0, number(reply, at + 5));
    }
    return new MultiEvaluation(new MultiDecision(allowed, decisions), states, t);
  }

  /**
   * check.lua's reply: allowed (1/0), remaining, retryAfter, resetAfter, delay (µs), t, then the
   * state's length (-1 for none) and its numbers, sent with denials for the near-cache.
   */
  static Evaluation evaluation(Policy policy, List<Object> reply) {
    return new Evaluation(decode(policy, reply, 0), state(reply, 6), number(reply, 5));
  }

  /** The decision whose five numbers start at {@code at}. */
  static Decision decode(Policy policy, List<Object> reply, int at) {
    long remaining = number(reply, at + 1);
    long retryAfter = number(reply, at + 2);
    long resetAfter = number(reply, at + 3);
    if (number(reply, at) == 1) {
      return Decision.allowed(policy, remaining, resetAfter, number(reply, at + 4));
    }
    return Decision.denied(policy, remaining, retryAfter, resetAfter);
  }

  /**
   * The state whose length is at {@code at}, followed by its numbers; null when the script sent
   * none (-1). Only meaningful for denials.
   */
  static long[] state(List<Object> reply, int at) {
    long length = number(reply, at);
    if (length < 0) {
      return null;
    }
    long[] state = new long[(int) length];
    for (int i = 0; i < state.length; i++) {
      state[i] = number(reply, at + 1 + i);
    }
    return state;
  }

  static long number(List<Object> reply, int index) {
    return (Long) reply.get(index);
  }
}

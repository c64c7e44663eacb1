package dev.ratelimit.spi;

import dev.ratelimit.Decision;
import dev.ratelimit.KeyedPolicy;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import java.util.List;

/**
 * One operation the limiter asks of a {@link Backend}, as a value: a backend implements {@link
 * Backend#execute} (and, when remote, {@link Backend#executeAsync}) for each kind, and the limiter
 * sends no other. Arguments arrive valid: keys non-empty, {@code 1 <= cost <= policy.capacity()},
 * {@code nowMicros} the limiter's clock (epoch microseconds).
 *
 * @param <R> what the operation answers
 */
public sealed interface Command<R>
    permits Command.Check, Command.CheckAll, Command.CheckAcross, Command.Inspect, Command.Reset,
        Command.Reserve, Command.GiveBack, Command.Charge, Command.ReserveAcross, Command.GiveBackAcross,
        Command.ChargeAcross {

  /**
   * Checks one policy and, when allowed, consumes {@code cost} units. Answers the decision, and for
   * a denial the key's state when the backend sends it (for the limiter's near-cache; null when it
   * does not).
   */
  record Check(String key, Policy policy, long cost, long nowMicros) implements Command<Evaluation> {}

  /**
   * Checks every policy of one key atomically: all consume, or none does. Answers one decision per
   * policy, in order, and for a denial each policy's state when the backend sends it.
   */
  record CheckAll(String key, List<Policy> policies, long cost, long nowMicros) implements Command<MultiEvaluation> {}

  /**
   * Checks pairs of different keys atomically: all consume, or none does. Sent only to a backend
   * that {@linkplain Backend#checksAcrossKeys checks across keys}; pairs of one key are sent as
   * {@link CheckAll}. A backend that can check them together only by group of keys (a Redis
   * Cluster, per hash slot) fails with {@link NotRoutedException} for pairs it cannot.
   */
  record CheckAcross(List<KeyedPolicy> checks, long cost, long nowMicros) implements Command<MultiDecision> {}

  /**
   * The state now as a check of {@code cost} would see it, consuming nothing and writing nothing.
   * A backend that can only inspect as a check of 1 answers {@link #ofUnitCost} of that.
   */
  record Inspect(String key, Policy policy, long cost, long nowMicros) implements Command<Decision> {
    /**
     * The answer for this cost, from the answer for a cost of 1 ({@code unit}): allowed when that
     * many remain, else denied until the later of its wait and the key's reset (an upper bound: a
     * backend that can do better answers exactly).
     */
    public Decision ofUnitCost(Decision unit) {
      if (cost == 1 || (unit.allowed() && unit.remaining() >= cost)) {
        return unit;
      }
      long wait = Math.max(unit.retryAfterMicros(), unit.resetAfterMicros());
      return Decision.denied(policy, unit.remaining(), wait, unit.resetAfterMicros());
    }
  }

  /** Forgets the state of ({@code key}, {@code policy}). Answers null. */
  record Reset(String key, Policy policy, long nowMicros) implements Command<Void> {}

  /**
   * Reserves {@code cost} units of every policy of one key, all or nothing: decided and consumed as
   * {@link CheckAll} would, and when allowed answers one {@link Mark} per policy for the units'
   * later {@link GiveBack}. Sent only to a backend that {@linkplain Backend#reserves reserves}.
   *
   * @param ledger an identity for the state's ledger of reservations, should this reservation open
   *     one (random, chosen by the limiter; a backend keeps the one already open)
   */
  record Reserve(String key, List<Policy> policies, long cost, long nowMicros, long ledger)
      implements Command<Reserved> {}

  /**
   * Gives back up to {@code units} of a reservation into each of {@code key}'s {@code policies},
   * where {@code marks} (in the same order) say its units went: as many as the algorithm's
   * give-back rule allows (ARCHITECTURE §4), never more than if they had never been taken, possibly
   * none. {@code 1 <= units <= } the reservation's cost. Answers null.
   *
   * @param settleId this settle's identity, random below 2^52 (0 for none): the limiter sends a
   *     settle again, with the same identity, when its first try failed within the deadline, and a
   *     remote backend applies each identity once, so that a try whose answer was lost but which
   *     ran is not applied twice
   */
  record GiveBack(String key, List<Policy> policies, List<Mark> marks, long units, long nowMicros, long settleId)
      implements Command<Void> {
    /** A give-back without an identity: applied as often as it is sent. */
    public GiveBack(String key, List<Policy> policies, List<Mark> marks, long units, long nowMicros) {
      this(key, policies, marks, units, nowMicros, 0);
    }
  }

  /**
   * Charges {@code units} to each of {@code key}'s {@code policies} whatever the limit: work already
   * done. A state may go into debt (bounded per algorithm, ARCHITECTURE §4), which later checks pay.
   * {@code 1 <= units <= 2^52}. Answers null.
   *
   * @param settleId this settle's identity, as {@link GiveBack#settleId}
   */
  record Charge(String key, List<Policy> policies, long units, long nowMicros, long settleId)
      implements Command<Void> {
    /** A charge without an identity: applied as often as it is sent. */
    public Charge(String key, List<Policy> policies, long units, long nowMicros) {
      this(key, policies, units, nowMicros, 0);
    }
  }

  /**
   * Reserves {@code cost} units of each pair of different keys, all or nothing: decided and
   * consumed as {@link CheckAcross} would, and when allowed answers one {@link Mark} per pair. Sent
   * only to a backend that {@linkplain Backend#reserves reserves} and {@linkplain
   * Backend#checksAcrossKeys checks across keys}; pairs of one key are sent as {@link Reserve}. A
   * reservation is never split: a backend that can take the pairs together only by group of keys
   * (a Redis Cluster, per hash slot) fails with {@link NotRoutedException} for pairs it cannot.
   *
   * @param ledger as {@link Reserve#ledger}
   */
  record ReserveAcross(List<KeyedPolicy> checks, long cost, long nowMicros, long ledger)
      implements Command<Reserved> {}

  /** {@link GiveBack} of a reservation across keys: each pair's units, where its mark says they went. */
  record GiveBackAcross(List<KeyedPolicy> checks, List<Mark> marks, long units, long nowMicros, long settleId)
      implements Command<Void> {}

  /** {@link Charge} of a reservation across keys: each pair charged whatever its limit. */
  record ChargeAcross(List<KeyedPolicy> checks, long units, long nowMicros, long settleId)
      implements Command<Void> {}
}

package dev.ratelimit;

import dev.ratelimit.spi.Backend;
import dev.ratelimit.spi.Command;
import dev.ratelimit.spi.Keys;
import dev.ratelimit.spi.Mark;
import dev.ratelimit.spi.Reserved;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * The limiter's reservations: a reserve decided as a check of the estimate would be (near-cache,
 * shadow mode, failure mode), and its settle, which never throws into the caller.
 */
final class Reservations implements Reservation.Settler {
  private final Backend backend;
  private final BackendCalls calls;
  private final Reports reports;
  private final FailureAnswers failures;
  private final LocalFallback fallback;
  private final NearCache nearCache;
  private final LongSupplier nowMicros;
  private final long timeoutNanos;
  private final LongAdder failedSettles = new LongAdder();
  private static final String SETTLE_FAILED = "a reservation's settle could not reach the rate limiter's backend;"
      + " it is tried again within the timeout, then its units stay as they were (RateLimiter.failedSettles()"
      + " counts these)";

  Reservations(Backend backend, BackendCalls calls, Reports reports, FailureAnswers failures, LocalFallback fallback,
      NearCache nearCache, LongSupplier nowMicros, long timeoutNanos) {
    this.backend = backend;
    this.calls = calls;
    this.reports = reports;
    this.failures = failures;
    this.fallback = fallback;
    this.nearCache = nearCache;
    this.nowMicros = nowMicros;
    this.timeoutNanos = timeoutNanos;
  }

  Reservation reserve(String key, List<Policy> policies, long estimate) {
    List<Policy> ps = validated(key, policies, estimate);
    long now = nowMicros.getAsLong();
    return decide(oneKey(key, ps, estimate, now), nearAnswer(key, ps, estimate, now));
  }

  /**
   * {@link #reserve} without blocking: the backend's own async call, bounded by the timeout; when
   * only shadow policies refused, the enforced ones reserved again the same way.
   */
  CompletionStage<Reservation> reserveAsync(String key, List<Policy> policies, long estimate) {
    List<Policy> ps = validated(key, policies, estimate);
    long now = nowMicros.getAsLong();
    return decideAsync(oneKey(key, ps, estimate, now), nearAnswer(key, ps, estimate, now));
  }

  /**
   * {@link RateLimiter#reserve(List, long)}: pairs of different keys reserved all or nothing, as a
   * cross-key check of the estimate would be (the failure mode and shadow policies alike; no
   * near-cache, as for that check); pairs of one key as {@link #reserve}.
   */
  Reservation reserveAcross(List<KeyedPolicy> checks, long estimate) {
    List<KeyedPolicy> cs = validatedAcross(checks, estimate);
    if (cs == null) {
      return reserve(checks.get(0).key(), KeyedPolicy.policies(checks), estimate);
    }
    return decide(across(cs, estimate, nowMicros.getAsLong()), null);
  }

  /** {@link #reserveAcross} without blocking. */
  CompletionStage<Reservation> reserveAcrossAsync(List<KeyedPolicy> checks, long estimate) {
    List<KeyedPolicy> cs = validatedAcross(checks, estimate);
    if (cs == null) {
      return reserveAsync(checks.get(0).key(), KeyedPolicy.policies(checks), estimate);
    }
    return decideAsync(across(cs, estimate, nowMicros.getAsLong()), null);
  }

  /**
   * What one reserve takes ({@code items}: the policies of one key, or pairs of keys), the command
   * that sends some of them, the failure mode's answer for some of them, and the reservation made.
   */
  private record Target<P>(List<P> items, Function<? super P, Policy> policyOf, Send<P> command,
      Function<List<P>, Judged> failed, BiFunction<MultiDecision, List<Mark>, Reservation> made) {}

  /** The command that reserves {@code items}, opening ledger {@code ledger} where a state has none. */
  private interface Send<P> {
    Command<Reserved> reserve(List<P> items, long ledger);
  }

  private Target<Policy> oneKey(String key, List<Policy> ps, long estimate, long now) {
    return new Target<>(ps, p -> p, (items, ledger) -> new Command.Reserve(key, items, estimate, now, ledger),
        items -> failures.all(items, p -> p, () -> fallback.checkAll(key, items, estimate, now)),
        (decision, marks) -> new Reservation(this, key, ps, estimate, decision, marks));
  }

  private Target<KeyedPolicy> across(List<KeyedPolicy> cs, long estimate, long now) {
    return new Target<>(cs, KeyedPolicy::policy,
        (items, ledger) -> new Command.ReserveAcross(items, estimate, now, ledger),
        items -> failures.all(items, KeyedPolicy::policy, () -> fallback.checkAll(items, estimate, now)),
        (decision, marks) -> new Reservation(this, cs, estimate, decision, marks));
  }

  private MultiDecision nearAnswer(String key, List<Policy> ps, long estimate, long now) {
    return nearCache == null ? null : nearCache.answerAll(Keys.bounded(key), ps, estimate, now);
  }

  /** A reserve decided as a check of its estimate: the near-cache's answer, else the backend's, shadow policies resolved. */
  private <P> Reservation decide(Target<P> t, MultiDecision local) {
    long deadline = System.nanoTime() + timeoutNanos;
    Map<P, Mark> held = new IdentityHashMap<>();
    Judged first = local != null ? Judged.of(local, Source.NEAR_CACHE) : once(t, t.items(), deadline, held);
    MultiDecision decision = reports.resolve(t.items(), t.policyOf(), first,
        enforced -> deadline - System.nanoTime() > 0 ? once(t, enforced, deadline, held) : t.failed().apply(enforced),
        t.failed());
    return made(t, decision, held);
  }

  /** {@link #decide} without blocking; when only shadow policies refused, the enforced ones reserved again. */
  private <P> CompletionStage<Reservation> decideAsync(Target<P> t, MultiDecision local) {
    long deadline = System.nanoTime() + timeoutNanos;
    Map<P, Mark> held = java.util.Collections.synchronizedMap(new IdentityHashMap<>());
    CompletableFuture<Judged> first = local != null
        ? CompletableFuture.completedFuture(Judged.of(local, Source.NEAR_CACHE))
        : onceAsync(t, t.items(), deadline, held);
    return first.thenCompose(judged -> {
      List<P> enforced = reports.rerunFor(t.items(), t.policyOf(), judged);
      if (enforced == null) {
        return CompletableFuture.completedFuture(reports.resolve(t.items(), t.policyOf(), judged, null, null));
      }
      CompletableFuture<Judged> again = judged.source() == Source.FAILURE || judged.source() == Source.FALLBACK
          || deadline - System.nanoTime() <= 0
          ? CompletableFuture.completedFuture(t.failed().apply(enforced))
          : onceAsync(t, enforced, deadline, held);
      return again.thenApply(second -> reports.resolve(t.items(), t.policyOf(), judged, e -> second, e -> second));
    }).thenApply(decision -> made(t, decision, held));
  }

  /** The reservation {@code decision} made: holding the marks in {@code held} when allowed, none when refused. */
  private static <P> Reservation made(Target<P> t, MultiDecision decision, Map<P, Mark> held) {
    List<Mark> marks = new ArrayList<>(t.items().size());
    for (P item : t.items()) {
      marks.add(decision.allowed() ? held.get(item) : null);
    }
    return t.made().apply(decision, marks);
  }

  /** One reserve of {@code items} on the backend, its marks put in {@code held}; the failure mode's answer when it fails. */
  private <P> Judged once(Target<P> t, List<P> items, long deadline, Map<P, Mark> held) {
    Command<Reserved> command = t.command().reserve(items, newLedgerId());
    return judged(t, calls.call(() -> backend.executeAsync(command), System.nanoTime(), deadline), items, held);
  }

  /** {@link #once} without blocking. */
  private <P> CompletableFuture<Judged> onceAsync(Target<P> t, List<P> items, long deadline, Map<P, Mark> held) {
    Command<Reserved> command = t.command().reserve(items, newLedgerId());
    return calls.callAsync(() -> backend.executeAsync(command), System.nanoTime(), deadline)
        .thenApply(reserved -> judged(t, reserved, items, held));
  }

  /** The backend's answer (null: it failed), its marks put in {@code held}; else the failure mode's answer. */
  private static <P> Judged judged(Target<P> t, Reserved reserved, List<P> items, Map<P, Mark> held) {
    if (reserved == null || reserved.decision().decisions().size() != items.size()) {
      return t.failed().apply(items);
    }
    if (reserved.decision().allowed()) {
      for (int i = 0; i < items.size(); i++) {
        held.put(items.get(i), reserved.marks().get(i));
      }
    }
    return Judged.of(reserved.decision(), Source.BACKEND);
  }

  /**
   * {@code checks} copied when they are of different keys, null when of one key.
   *
   * @throws IllegalArgumentException for bad input, as the cross-key checkAll
   * @throws UnsupportedOperationException when the backend does not reserve, or not across keys
   */
  private List<KeyedPolicy> validatedAcross(List<KeyedPolicy> checks, long estimate) {
    CheckArguments.validateAcross(checks, estimate);
    if (KeyedPolicy.commonKey(checks) != null) {
      return null;
    }
    requireReserves();
    if (!backend.checksAcrossKeys()) {
      throw new UnsupportedOperationException("the backend " + backend.getClass().getName() + " does not reserve"
          + " pairs of different keys together (its checksAcrossKeys() is false); reserve one key at a time with"
          + " reserve(key, policies, estimate)");
    }
    return List.copyOf(checks);
  }

  /** {@link RateLimiter#resume}: the original's marks, its decisions unknown here. */
  Reservation resume(String key, List<Policy> policies, long estimate, List<Mark> marks) {
    List<Policy> ps = validated(key, policies, estimate);
    java.util.Objects.requireNonNull(marks, "marks");
    Require.argument(marks.size() == ps.size(), "a resumed reservation needs one mark per policy (null where none"
        + " is held): %d marks for %d policies", marks.size(), ps.size());
    List<Decision> unknown = new ArrayList<>(ps.size());
    for (Policy p : ps) {
      unknown.add(Decision.allowed(p, -1, 0, 0));
    }
    return new Reservation(this, key, ps, estimate, new MultiDecision(true, unknown),
        java.util.Collections.unmodifiableList(new ArrayList<>(marks)));
  }

  /**
   * {@code policies} as a reserve takes them, copied.
   *
   * @throws IllegalArgumentException for bad input, as checkAll
   * @throws UnsupportedOperationException when the backend does not take reservations
   */
  private List<Policy> validated(String key, List<Policy> policies, long estimate) {
    CheckArguments.validateAll(key, policies, estimate);
    requireReserves();
    return List.copyOf(policies);
  }

  private void requireReserves() {
    if (!backend.reserves()) {
      throw new UnsupportedOperationException("the backend " + backend.getClass().getName()
          + " does not take reservations (Backend.reserves() is false); the in-memory backend does");
    }
  }

  /** A ledger's (or a settle's) identity: random, below 2^52 so that Lua's numbers carry it exactly. */
  private static long newLedgerId() {
    return ThreadLocalRandom.current().nextLong(1, 1L << 52);
  }

  @Override
  public boolean settle(Reservation reservation, long units) {
    Settle settle = settleOf(reservation, units);
    if (settle == null) {
      return true; // the failure mode answered, or only shadow policies: nothing is held on the backend
    }
    long start = System.nanoTime();
    long deadline = start + retryWindowNanos();
    Boolean done = attempt(settle, start, deadline);
    for (long pause = FIRST_PAUSE_NANOS; done == null && settle.retries() && deadline - System.nanoTime() > pause;
        pause *= 2) {
      LockSupport.parkNanos(pause);
      if (Thread.currentThread().isInterrupted()) {
        break; // the caller is being stopped: the settle counts as failed, the flag stays set
      }
      done = attempt(settle, System.nanoTime(), deadline);
    }
    settled(settle, done);
    return done != null;
  }

  @Override
  public CompletionStage<Boolean> settleAsync(Reservation reservation, long units) {
    Settle settle = settleOf(reservation, units);
    if (settle == null) {
      return CompletableFuture.completedFuture(true);
    }
    long start = System.nanoTime();
    return attemptAsync(settle, start, start + retryWindowNanos(), FIRST_PAUSE_NANOS).thenApply(done -> {
      settled(settle, done);
      return done != null;
    });
  }

  /**
   * How long a settle may take, its retries included: the timeout, and at most {@value
   * #MAX_RETRY_WINDOW_SECONDS} s, well within how long a remote backend keeps a settle's identity
   * (the Redis backend: 10 s at least), so that no retry arrives after its first try is forgotten.
   */
  private long retryWindowNanos() {
    return Math.min(timeoutNanos, java.util.concurrent.TimeUnit.SECONDS.toNanos(MAX_RETRY_WINDOW_SECONDS));
  }

  private static final int MAX_RETRY_WINDOW_SECONDS = 5;

  /** The pause before a settle's first retry; each next one waits twice as long, within the deadline. */
  private static final long FIRST_PAUSE_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(10);

  /** One try of a settle; null when it failed (reported and logged by the call). */
  private Boolean attempt(Settle settle, long start, long deadline) {
    return calls.call(() -> backend.executeAsync(settle.command()).thenApply(v -> Boolean.TRUE), start, deadline,
        SETTLE_FAILED);
  }

  /** {@link #attempt}, tried again after {@code pause} (then twice as long) while it fails within the deadline. */
  private CompletableFuture<Boolean> attemptAsync(Settle settle, long start, long deadline, long pause) {
    return calls.callAsync(() -> backend.executeAsync(settle.command()).thenApply(v -> Boolean.TRUE), start,
        deadline, SETTLE_FAILED).thenCompose(done -> {
          if (done != null || !settle.retries() || deadline - System.nanoTime() <= pause) {
            return CompletableFuture.completedFuture(done);
          }
          Executor later = CompletableFuture.delayedExecutor(pause, java.util.concurrent.TimeUnit.NANOSECONDS);
          return CompletableFuture.supplyAsync(System::nanoTime, later)
              .thenCompose(now -> attemptAsync(settle, now, deadline, pause * 2));
        });
  }

  /**
   * One settle's command, for the policies where units are held, and their keys (one key's for
   * {@code keys} null). {@code retries} when it carries an identity: a remote backend applies it
   * once however often it is sent.
   */
  private record Settle(Command<Void> command, String key, List<String> keys, List<Policy> policies,
      boolean givesBack, long now, boolean retries) {}

  private Settle settleOf(Reservation reservation, long units) {
    List<Policy> policies = new ArrayList<>();
    List<Mark> marks = new ArrayList<>();
    List<String> keys = reservation.acrossKeys() ? new ArrayList<>() : null;
    for (int i = 0; i < reservation.policies().size(); i++) {
      Mark mark = reservation.marks().get(i);
      if (mark != null) {
        policies.add(reservation.policies().get(i));
        marks.add(mark);
        if (keys != null) {
          keys.add(reservation.keyOf(i));
        }
      }
    }
    if (policies.isEmpty()) {
      return null;
    }
    long now = nowMicros.getAsLong();
    // a remote backend's answer can be lost after the settle ran: its identity lets a retry be applied once
    long id = backend.isRemote() ? newLedgerId() : 0;
    String key = reservation.key();
    Command<Void> command;
    if (keys != null) {
      List<KeyedPolicy> pairs = new ArrayList<>(policies.size());
      for (int i = 0; i < policies.size(); i++) {
        pairs.add(KeyedPolicy.of(keys.get(i), policies.get(i)));
      }
      command = units > 0 ? new Command.GiveBackAcross(pairs, marks, units, now, id)
          : new Command.ChargeAcross(pairs, -units, now, id);
    } else {
      command = units > 0 ? new Command.GiveBack(key, policies, marks, units, now, id)
          : new Command.Charge(key, policies, -units, now, id);
    }
    return new Settle(command, key, keys, policies, units > 0, now, id != 0);
  }

  /** After a settle and its retries: counted once when it failed ({@code done} null); a give-back clears remembered denials. */
  private void settled(Settle settle, Boolean done) {
    if (done == null) {
      failedSettles.increment(); // reported and logged by the call; the units stay as they were
    }
    if (settle.givesBack() && nearCache != null) {
      String oneKey = settle.keys() == null ? Keys.bounded(settle.key()) : null;
      for (int i = 0; i < settle.policies().size(); i++) {
        // units came back: a remembered denial may no longer be one
        String nearKey = oneKey != null ? oneKey : Keys.bounded(settle.keys().get(i));
        nearCache.forget(nearKey, settle.policies().get(i), settle.now());
      }
    }
  }

  /** How many settles could not reach the backend. */
  long failedSettles() {
    return failedSettles.sum();
  }
}

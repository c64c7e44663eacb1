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
    long deadline = System.nanoTime() + timeoutNanos;
    Map<Policy, Mark> held = new IdentityHashMap<>();
    MultiDecision local = nearCache == null ? null : nearCache.answerAll(Keys.bounded(key), ps, estimate, now);
    Judged first = local != null ? Judged.of(local, Source.NEAR_CACHE) : reserveOnce(key, ps, estimate, now, deadline, held);
    MultiDecision decision = reports.resolve(ps, p -> p, first,
        enforced -> deadline - System.nanoTime() > 0 ? reserveOnce(key, enforced, estimate, now, deadline, held)
            : failed(key, enforced, estimate, now),
        enforced -> failed(key, enforced, estimate, now));
    return reservation(key, ps, estimate, decision, held);
  }

  /**
   * {@link #reserve} without blocking: the backend's own async call, bounded by the timeout; when
   * only shadow policies refused, the enforced ones reserved again the same way.
   */
  CompletionStage<Reservation> reserveAsync(String key, List<Policy> policies, long estimate) {
    List<Policy> ps = validated(key, policies, estimate);
    long now = nowMicros.getAsLong();
    long deadline = System.nanoTime() + timeoutNanos;
    Map<Policy, Mark> held = java.util.Collections.synchronizedMap(new IdentityHashMap<>());
    MultiDecision local = nearCache == null ? null : nearCache.answerAll(Keys.bounded(key), ps, estimate, now);
    CompletableFuture<Judged> first = local != null
        ? CompletableFuture.completedFuture(Judged.of(local, Source.NEAR_CACHE))
        : reserveOnceAsync(key, ps, estimate, now, deadline, held);
    return first.thenCompose(judged -> {
      List<Policy> enforced = reports.rerunFor(ps, p -> p, judged);
      if (enforced == null) {
        return CompletableFuture.completedFuture(reports.resolve(ps, p -> p, judged, null, null));
      }
      CompletableFuture<Judged> again = judged.source() == Source.FAILURE || judged.source() == Source.FALLBACK
          || deadline - System.nanoTime() <= 0
          ? CompletableFuture.completedFuture(failed(key, enforced, estimate, now))
          : reserveOnceAsync(key, enforced, estimate, now, deadline, held);
      return again.thenApply(second -> reports.resolve(ps, p -> p, judged, e -> second, e -> second));
    }).thenApply(decision -> reservation(key, ps, estimate, decision, held));
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
    long now = nowMicros.getAsLong();
    long deadline = System.nanoTime() + timeoutNanos;
    Map<KeyedPolicy, Mark> held = new IdentityHashMap<>();
    MultiDecision decision = reports.resolve(cs, KeyedPolicy::policy, acrossOnce(cs, estimate, now, deadline, held),
        enforced -> deadline - System.nanoTime() > 0 ? acrossOnce(enforced, estimate, now, deadline, held)
            : failedAcross(enforced, estimate, now),
        enforced -> failedAcross(enforced, estimate, now));
    return reservationAcross(cs, estimate, decision, held);
  }

  /** {@link #reserveAcross} without blocking. */
  CompletionStage<Reservation> reserveAcrossAsync(List<KeyedPolicy> checks, long estimate) {
    List<KeyedPolicy> cs = validatedAcross(checks, estimate);
    if (cs == null) {
      return reserveAsync(checks.get(0).key(), KeyedPolicy.policies(checks), estimate);
    }
    long now = nowMicros.getAsLong();
    long deadline = System.nanoTime() + timeoutNanos;
    Map<KeyedPolicy, Mark> held = java.util.Collections.synchronizedMap(new IdentityHashMap<>());
    return acrossOnceAsync(cs, estimate, now, deadline, held).thenCompose(judged -> {
      List<KeyedPolicy> enforced = reports.rerunFor(cs, KeyedPolicy::policy, judged);
      if (enforced == null) {
        return CompletableFuture.completedFuture(reports.resolve(cs, KeyedPolicy::policy, judged, null, null));
      }
      CompletableFuture<Judged> again = judged.source() == Source.FAILURE || judged.source() == Source.FALLBACK
          || deadline - System.nanoTime() <= 0
          ? CompletableFuture.completedFuture(failedAcross(enforced, estimate, now))
          : acrossOnceAsync(enforced, estimate, now, deadline, held);
      return again.thenApply(second -> reports.resolve(cs, KeyedPolicy::policy, judged, e -> second, e -> second));
    }).thenApply(decision -> reservationAcross(cs, estimate, decision, held));
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

  private Reservation reservationAcross(List<KeyedPolicy> cs, long estimate, MultiDecision decision,
      Map<KeyedPolicy, Mark> held) {
    List<Mark> marks = new ArrayList<>(cs.size());
    for (KeyedPolicy c : cs) {
      marks.add(decision.allowed() ? held.get(c) : null);
    }
    return new Reservation(this, cs, estimate, decision, marks);
  }

  private Judged acrossOnce(List<KeyedPolicy> cs, long estimate, long now, long deadline, Map<KeyedPolicy, Mark> held) {
    Command.ReserveAcross command = new Command.ReserveAcross(cs, estimate, now, newLedgerId());
    return judgedAcross(calls.call(() -> backend.executeAsync(command), System.nanoTime(), deadline), cs, estimate,
        now, held);
  }

  private CompletableFuture<Judged> acrossOnceAsync(List<KeyedPolicy> cs, long estimate, long now, long deadline,
      Map<KeyedPolicy, Mark> held) {
    Command.ReserveAcross command = new Command.ReserveAcross(cs, estimate, now, newLedgerId());
    return calls.callAsync(() -> backend.executeAsync(command), System.nanoTime(), deadline)
        .thenApply(reserved -> judgedAcross(reserved, cs, estimate, now, held));
  }

  private Judged judgedAcross(Reserved reserved, List<KeyedPolicy> cs, long estimate, long now,
      Map<KeyedPolicy, Mark> held) {
    if (reserved == null || reserved.decision().decisions().size() != cs.size()) {
      return failedAcross(cs, estimate, now);
    }
    if (reserved.decision().allowed()) {
      for (int i = 0; i < cs.size(); i++) {
        held.put(cs.get(i), reserved.marks().get(i));
      }
    }
    return Judged.of(reserved.decision(), Source.BACKEND);
  }

  private Judged failedAcross(List<KeyedPolicy> cs, long estimate, long now) {
    return failures.all(cs, KeyedPolicy::policy, () -> fallback.checkAll(cs, estimate, now));
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

  /** The reservation {@code decision} made: holding the marks in {@code held} when allowed, none when refused. */
  private Reservation reservation(String key, List<Policy> ps, long estimate, MultiDecision decision,
      Map<Policy, Mark> held) {
    List<Mark> marks = new ArrayList<>(ps.size());
    for (Policy p : ps) {
      marks.add(decision.allowed() ? held.get(p) : null);
    }
    return new Reservation(this, key, ps, estimate, decision, marks);
  }

  /** One reserve on the backend, its marks put in {@code held}; the failure mode's answer when it fails. */
  private Judged reserveOnce(String key, List<Policy> ps, long estimate, long now, long deadline,
      Map<Policy, Mark> held) {
    Command.Reserve command = new Command.Reserve(key, ps, estimate, now, newLedgerId());
    return judged(calls.call(() -> backend.executeAsync(command), System.nanoTime(), deadline), key, ps, estimate,
        now, held);
  }

  /** {@link #reserveOnce} without blocking. */
  private CompletableFuture<Judged> reserveOnceAsync(String key, List<Policy> ps, long estimate, long now,
      long deadline, Map<Policy, Mark> held) {
    Command.Reserve command = new Command.Reserve(key, ps, estimate, now, newLedgerId());
    return calls.callAsync(() -> backend.executeAsync(command), System.nanoTime(), deadline)
        .thenApply(reserved -> judged(reserved, key, ps, estimate, now, held));
  }

  /** The backend's answer (null: it failed), its marks put in {@code held}; else the failure mode's answer. */
  private Judged judged(Reserved reserved, String key, List<Policy> ps, long estimate, long now,
      Map<Policy, Mark> held) {
    if (reserved == null) {
      return failed(key, ps, estimate, now);
    }
    if (reserved.decision().allowed()) {
      for (int i = 0; i < ps.size(); i++) {
        held.put(ps.get(i), reserved.marks().get(i));
      }
    }
    return Judged.of(reserved.decision(), Source.BACKEND);
  }

  /** The failure mode's answer; nothing is held for it (the local fallback keeps its estimate). */
  private Judged failed(String key, List<Policy> ps, long estimate, long now) {
    return failures.all(ps, p -> p, () -> fallback.checkAll(key, ps, estimate, now));
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
   * One settle's command, for the policies where units are held. {@code retries} when it carries an
   * identity: a remote backend applies it once however often it is sent.
   */
  private record Settle(Command<Void> command, List<KeyedPolicy> pairs, boolean givesBack, long now,
      boolean retries) {}

  private Settle settleOf(Reservation reservation, long units) {
    List<KeyedPolicy> pairs = new ArrayList<>();
    List<Mark> marks = new ArrayList<>();
    List<KeyedPolicy> reserved = reservation.keyedPolicies();
    for (int i = 0; i < reserved.size(); i++) {
      Mark mark = reservation.marks().get(i);
      if (mark != null) {
        pairs.add(reserved.get(i));
        marks.add(mark);
      }
    }
    if (pairs.isEmpty()) {
      return null;
    }
    long now = nowMicros.getAsLong();
    // a remote backend's answer can be lost after the settle ran: its identity lets a retry be applied once
    long id = backend.isRemote() ? newLedgerId() : 0;
    Command<Void> command;
    if (reservation.acrossKeys()) {
      command = units > 0 ? new Command.GiveBackAcross(pairs, marks, units, now, id)
          : new Command.ChargeAcross(pairs, -units, now, id);
    } else {
      String key = reservation.key();
      List<Policy> policies = KeyedPolicy.policies(pairs);
      command = units > 0 ? new Command.GiveBack(key, policies, marks, units, now, id)
          : new Command.Charge(key, policies, -units, now, id);
    }
    return new Settle(command, pairs, units > 0, now, id != 0);
  }

  /** After a settle and its retries: counted once when it failed ({@code done} null); a give-back clears remembered denials. */
  private void settled(Settle settle, Boolean done) {
    if (done == null) {
      failedSettles.increment(); // reported and logged by the call; the units stay as they were
    }
    if (settle.givesBack() && nearCache != null) {
      for (KeyedPolicy pair : settle.pairs()) {
        // units came back: a remembered denial may no longer be one
        nearCache.forget(Keys.bounded(pair.key()), pair.policy(), settle.now());
      }
    }
  }

  /** How many settles could not reach the backend. */
  long failedSettles() {
    return failedSettles.sum();
  }
}

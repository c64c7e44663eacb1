package dev.ratelimit.spring;

import dev.ratelimit.Decision;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.annotation.RateLimitExceededException;
import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.internal.expression.SandboxContext;
import dev.ratelimit.webflux.EventLoops;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.aopalliance.intercept.MethodInvocation;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.util.ClassUtils;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@code @RateLimited} on a method that returns a {@code Mono}, a {@code Flux} or a {@code
 * CompletionStage}: one check per subscription (per call for a {@code CompletionStage}, which runs
 * at once), made when it is subscribed, with {@link RateLimiter#checkAllAsync}: no thread waits. An
 * allowed subscription calls the method then and subscribes to what it returns; a denial is the
 * error signal {@link RateLimitExceededException} (or the fallback method's publisher); {@code
 * Mode.WAIT} delays the subscription on Reactor's timer until the limit has room (or maxWait), and
 * a leaky bucket's delay likewise. A countWhen policy is reserved when the subscription is admitted
 * and settled when the publisher ends: its condition reads {@code #result}, the last value emitted
 * (null when none), and {@code #exception}, the error signalled; a cancelled subscription counts.
 * Reserves and settles are made without blocking too ({@link RateLimiter#reserveAsync}, {@link
 * dev.ratelimit.Reservation#commitAsync}). Loaded only when Reactor is present.
 */
final class ReactiveCalls {
  /** Whether Reactor is on the class path. */
  static final boolean REACTOR = ClassUtils.isPresent("reactor.core.publisher.Mono", ReactiveCalls.class.getClassLoader());

  private final RateLimiter limiter;
  private final RateLimitedMethods methods;
  private final DenialLog denials;
  private final RateLimitAspect aspect;
  /** The exchange's variables; null without Spring WebFlux. */
  private final ExchangeVariables exchanges;

  ReactiveCalls(RateLimiter limiter, RateLimitedMethods methods, DenialLog denials, RateLimitAspect aspect,
      dev.ratelimit.internal.http.ForwardedClient clientIp) {
    this.limiter = limiter;
    this.methods = methods;
    this.denials = denials;
    this.aspect = aspect;
    this.exchanges = ExchangeVariables.PRESENT ? new ExchangeVariables(clientIp) : null;
  }

  /** Whether a method returning {@code type} is limited per subscription: a Mono, a Flux or a CompletionStage. */
  static boolean isReactive(Class<?> type) {
    if (CompletionStage.class.isAssignableFrom(type)) {
      return REACTOR;
    }
    return REACTOR && (Mono.class.isAssignableFrom(type) || Flux.class.isAssignableFrom(type));
  }

  /** What a subscription was admitted with: the decision, and the countWhen reservations it holds. */
  private record Admission(MultiDecision decision, RateLimitAspect.Checks checks, SandboxContext context,
      List<RateLimitAspect.Held> held) {}

  /** The call's result, limited per subscription. */
  Object invoke(MethodInvocation call, RateLimitedMethod limited) {
    Class<?> type = call.getMethod().getReturnType();
    // the call and the end of the exchange on the server's event loop, not the backend's I/O thread (see EventLoops)
    Mono<Admission> admitted = EventLoops.onSubscribingLoop(
        Mono.deferContextual(subscriber -> admit(call, limited, System.nanoTime() + limited.maxWait().toNanos(),
            subscriber)));
    if (Flux.class.isAssignableFrom(type)) {
      return Flux.defer(() -> admitted.flatMapMany(a -> !a.decision().allowed() ? Flux.from(fallback(call, limited, a.decision()))
          : a.held().isEmpty() ? Flux.from(proceed(call)) : settled(Flux.from(proceed(call)), a)));
    }
    Mono<Object> mono = admitted.flatMap(a -> !a.decision().allowed() ? Mono.from(fallback(call, limited, a.decision()))
        : a.held().isEmpty() ? Mono.from(proceed(call)) : settled(Mono.from(proceed(call)), a));
    if (CompletionStage.class.isAssignableFrom(type)) {
      return mono.toFuture(); // a CompletionStage runs now: this call is its one subscription
    }
    return mono;
  }

  /**
   * {@code run}, its countWhen reservations settled when it ends: by the condition on what it
   * emitted last ({@code #result}, null when nothing) or signalled ({@code #exception}); a
   * cancelled subscription is counted (the work may have run; an abort must not avoid the limit).
   */
  private static <T> Mono<T> settled(Mono<T> run, Admission a) {
    java.util.concurrent.atomic.AtomicReference<Object> last = new java.util.concurrent.atomic.AtomicReference<>();
    return Mono.usingWhen(Mono.just(a), x -> run.doOnNext(last::set),
        x -> settle(a, last.get(), null), (x, e) -> settle(a, last.get(), e), x -> settle(a, last.get(), CANCELLED));
  }

  private static <T> Flux<T> settled(Flux<T> run, Admission a) {
    java.util.concurrent.atomic.AtomicReference<Object> last = new java.util.concurrent.atomic.AtomicReference<>();
    return Flux.usingWhen(Mono.just(a), x -> run.doOnNext(last::set),
        x -> settle(a, last.get(), null), (x, e) -> settle(a, last.get(), e), x -> settle(a, last.get(), CANCELLED));
  }

  /** Stands for a cancelled subscription: its reservations are committed, whatever the condition. */
  private static final Throwable CANCELLED = new java.util.concurrent.CancellationException("cancelled");

  /** Settles without blocking; a failing countWhen is the error signal, once every settle has completed. */
  private static Mono<Void> settle(Admission a, Object result, Throwable signalled) {
    return Mono.defer(() -> {
      List<CompletableFuture<Void>> settles = new ArrayList<>(a.held().size());
      RuntimeException failed = null;
      if (signalled == CANCELLED) {
        for (RateLimitAspect.Held h : a.held()) {
          settles.add(h.reservation().commitAsync(a.checks().cost).toCompletableFuture());
        }
      } else {
        failed = RateLimitAspect.settle(a.held(), a.context(), result, signalled, a.checks().cost,
            (reservation, actual) -> settles.add((actual > 0 ? reservation.commitAsync(actual)
                : reservation.cancelAsync()).toCompletableFuture()));
      }
      Mono<Void> done = EventLoops.awaited(() -> CompletableFuture.allOf(settles.toArray(CompletableFuture[]::new))
          .thenApply(v -> Boolean.TRUE)).then();
      return failed == null ? done : done.then(Mono.error(failed));
    });
  }

  /**
   * Reserves the call's cost on each countWhen or costAfter policy, in order, without blocking, up
   * to the first refusal; then those already taken are given back and the refusal answered (with
   * the {@code admitted} decisions before it), as {@link RateLimitAspect#reserve} does.
   */
  private Mono<MultiDecision> reserve(List<Map.Entry<String, RateLimitAspect.Counted>> after, int next,
      List<Decision> admitted, List<Decision> seen, long cost, List<RateLimitAspect.Held> held) {
    if (next == after.size()) {
      return Mono.just(new MultiDecision(true, seen));
    }
    Map.Entry<String, RateLimitAspect.Counted> entry = after.get(next);
    return EventLoops.awaited(() -> limiter.reserveAsync(entry.getKey(), entry.getValue().policy(), cost))
        .flatMap(reservation -> {
          seen.addAll(reservation.decisions().decisions());
          if (reservation.allowed()) {
            held.add(new RateLimitAspect.Held(entry.getValue(), reservation));
            return reserve(after, next + 1, admitted, seen, cost, held);
          }
          List<Decision> decisions = new ArrayList<>(admitted);
          decisions.addAll(seen);
          return released(held).thenReturn(new MultiDecision(false, decisions));
        });
  }

  /** Gives back every reservation in {@code held}, without blocking: the call did not run. */
  private static Mono<Void> released(List<RateLimitAspect.Held> held) {
    return Mono.defer(() -> {
      List<CompletableFuture<Void>> cancels = new ArrayList<>(held.size());
      for (RateLimitAspect.Held h : held) {
        cancels.add(h.reservation().cancelAsync().toCompletableFuture());
      }
      return EventLoops.awaited(() -> CompletableFuture.allOf(cancels.toArray(CompletableFuture[]::new))
          .thenApply(v -> Boolean.TRUE)).then();
    });
  }

  /**
   * The admission of one subscription: allowed (after a leaky bucket's delay), or denied once WAIT
   * has no time left; a missing key is an error signal. Keys and cost are evaluated once, with the
   * request variables of the exchange in the {@code subscriber}'s context, if any.
   */
  private Mono<Admission> admit(MethodInvocation call, RateLimitedMethod limited, long deadline,
      reactor.util.context.ContextView subscriber) {
    SandboxContext variables = aspect.variables(limited, call.getArguments());
    Mono<SandboxContext> bound = exchanges == null ? Mono.just(variables) : exchanges.bind(subscriber, variables);
    return bound.flatMap(context -> {
      RateLimitAspect.Checks checks = aspect.evaluate(limited, context);
      return attempt(limited, checks, context, new ArrayList<>(checks.before.entrySet()), new ArrayList<>(), deadline);
    });
  }

  /**
   * One try: countWhen's policies reserved first (off the event loop: a blocking call), then the
   * keys still pending, in order; WAIT tries again after the denial's retryAfter.
   */
  private Mono<Admission> attempt(RateLimitedMethod limited, RateLimitAspect.Checks checks, SandboxContext context,
      List<Map.Entry<String, List<Policy>>> pending, List<Decision> admitted, long deadline) {
    Mono<Admission> reserved;
    if (checks.after.isEmpty()) {
      reserved = Mono.just(new Admission(null, checks, context, List.of()));
    } else {
      List<Map.Entry<String, RateLimitAspect.Counted>> after = new ArrayList<>();
      checks.after.forEach((key, counted) -> counted.forEach(c -> after.add(Map.entry(key, c))));
      List<RateLimitAspect.Held> held = new ArrayList<>();
      reserved = reserve(after, 0, admitted, new ArrayList<>(), checks.cost, held)
          .map(decision -> new Admission(decision, checks, context, held));
    }
    return reserved.flatMap(r -> {
      MultiDecision first = r.decision();
      if (first != null && (!first.allowed() || (pending.isEmpty() && admitted.isEmpty()))) {
        return Mono.just(r); // refused (nothing held), or nothing to charge before the call
      }
      return check(pending, admitted, checks.cost).flatMap(charged -> {
        Admission joined = new Admission(first == null ? charged : RateLimitAspect.joined(first, charged), checks,
            context, r.held());
        // refused before the call: what countWhen reserved goes back
        return charged.allowed() || r.held().isEmpty() ? Mono.just(joined) : released(r.held()).thenReturn(joined);
      });
    }).flatMap(a -> {
      MultiDecision decision = a.decision();
      if (decision.allowed()) {
        long delay = RateLimitAspect.maxDelayMicros(decision);
        return delay > 0 ? Mono.delay(Duration.ofNanos(delay * 1_000)).thenReturn(a) : Mono.just(a);
      }
      Duration retry = decision.limiting().retryAfter();
      if (limited.mode() == RateLimited.Mode.WAIT && System.nanoTime() + retry.toNanos() <= deadline) {
        // on Reactor's timer, no thread sleeping; keys admitted before stay admitted, not charged twice
        return Mono.delay(retry.isZero() ? Duration.ofNanos(1) : retry)
            .then(Mono.defer(() -> attempt(limited, checks, context, pending, admitted, deadline)));
      }
      if (denials != null) {
        denials.denied(limited.describe(), decision.limiting(), checks.keyOf(decision.limiting().policy()));
      }
      return Mono.just(a);
    });
  }

  /**
   * Checks the {@code pending} keys in order, one checkAllAsync each, up to the first denial: a key
   * that passes leaves {@code pending} and its decisions join {@code admitted} (one subscription's
   * state, used by one attempt at a time).
   */
  private Mono<MultiDecision> check(List<Map.Entry<String, List<Policy>>> pending, List<Decision> admitted,
      long cost) {
    if (pending.isEmpty()) {
      return Mono.just(new MultiDecision(true, List.copyOf(admitted)));
    }
    Map.Entry<String, List<Policy>> entry = pending.get(0);
    return Mono.fromCompletionStage(() -> limiter.checkAllAsync(entry.getKey(), entry.getValue(), cost))
        .flatMap(part -> {
          if (!part.allowed()) {
            List<Decision> decisions = new ArrayList<>(admitted);
            decisions.addAll(part.decisions());
            return Mono.just(new MultiDecision(false, decisions));
          }
          admitted.addAll(part.decisions());
          pending.remove(0);
          return check(pending, admitted, cost);
        });
  }

  /** Calls the method, once per admitted subscription: a clone of the invocation each time. */
  private static Publisher<?> proceed(MethodInvocation call) {
    try {
      MethodInvocation invocation = call instanceof ProxyMethodInvocation proxy ? proxy.invocableClone() : call;
      return publisher(invocation.proceed());
    } catch (Throwable t) {
      return Mono.error(t);
    }
  }

  /** The denial as an error signal, or the fallback method's answer. */
  private Publisher<?> fallback(MethodInvocation call, RateLimitedMethod limited, MultiDecision decision) {
    RateLimitExceededException refused = new RateLimitExceededException(decision);
    if (limited.fallback() == null) {
      return Mono.error(refused);
    }
    try {
      return publisher(limited.fallback().call(call.getThis(), call.getArguments(), refused));
    } catch (Throwable t) {
      return Mono.error(t);
    }
  }

  private static Publisher<?> publisher(Object result) {
    if (result == null) {
      return Mono.empty();
    }
    if (result instanceof CompletionStage<?> stage) {
      return Mono.fromCompletionStage(stage);
    }
    return (Publisher<?>) result;
  }
}

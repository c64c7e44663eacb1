package dev.ratelimit.spring;

import dev.ratelimit.Decision;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.annotation.RateLimitExceededException;
import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.webflux.EventLoops;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
 * a leaky bucket's delay likewise. Loaded only when Reactor is present.
 */
final class ReactiveCalls {
  /** Whether Reactor is on the class path. */
  static final boolean REACTOR = ClassUtils.isPresent("reactor.core.publisher.Mono", ReactiveCalls.class.getClassLoader());

  private final RateLimiter limiter;
  private final RateLimitedMethods methods;
  private final DenialLog denials;
  private final RateLimitAspect aspect;

  ReactiveCalls(RateLimiter limiter, RateLimitedMethods methods, DenialLog denials, RateLimitAspect aspect) {
    this.limiter = limiter;
    this.methods = methods;
    this.denials = denials;
    this.aspect = aspect;
  }

  /** Whether a method returning {@code type} is limited per subscription: a Mono, a Flux or a CompletionStage. */
  static boolean isReactive(Class<?> type) {
    if (CompletionStage.class.isAssignableFrom(type)) {
      return REACTOR;
    }
    return REACTOR && (Mono.class.isAssignableFrom(type) || Flux.class.isAssignableFrom(type));
  }

  /** The call's result, limited per subscription. */
  Object invoke(MethodInvocation call, RateLimitedMethod limited) {
    Class<?> type = call.getMethod().getReturnType();
    // the call and the end of the exchange on the server's event loop, not the backend's I/O thread (see EventLoops)
    Mono<MultiDecision> admitted = EventLoops.onSubscribingLoop(
        Mono.defer(() -> admit(call, limited, System.nanoTime() + limited.maxWait().toNanos())));
    if (Flux.class.isAssignableFrom(type)) {
      return Flux.defer(() -> admitted.flatMapMany(d -> d.allowed() ? Flux.from(proceed(call))
          : Flux.from(fallback(call, limited, d))));
    }
    Mono<Object> mono = admitted.flatMap(d -> d.allowed() ? Mono.from(proceed(call)) : Mono.from(fallback(call, limited, d)));
    if (CompletionStage.class.isAssignableFrom(type)) {
      return mono.toFuture(); // a CompletionStage runs now: this call is its one subscription
    }
    return mono;
  }

  /**
   * The decision for one subscription: allowed (after a leaky bucket's delay), or denied once WAIT
   * has no time left; a missing key is an error signal. Keys and cost are evaluated once.
   */
  private Mono<MultiDecision> admit(MethodInvocation call, RateLimitedMethod limited, long deadline) {
    RateLimitAspect.Checks checks = aspect.evaluate(limited, aspect.variables(limited, call.getArguments()));
    return attempt(limited, checks, new ArrayList<>(checks.before.entrySet()), new ArrayList<>(), deadline);
  }

  /** One try: the keys still pending, in order; WAIT tries again after the denial's retryAfter. */
  private Mono<MultiDecision> attempt(RateLimitedMethod limited, RateLimitAspect.Checks checks,
      List<Map.Entry<String, List<Policy>>> pending, List<Decision> admitted, long deadline) {
    return check(pending, admitted, checks.cost).flatMap(decision -> {
      if (decision.allowed()) {
        long delay = RateLimitAspect.maxDelayMicros(decision);
        return delay > 0 ? Mono.delay(Duration.ofNanos(delay * 1_000)).thenReturn(decision) : Mono.just(decision);
      }
      Duration retry = decision.limiting().retryAfter();
      if (limited.mode() == RateLimited.Mode.WAIT && System.nanoTime() + retry.toNanos() <= deadline) {
        // on Reactor's timer, no thread sleeping; keys admitted before stay admitted, not charged twice
        return Mono.delay(retry.isZero() ? Duration.ofNanos(1) : retry)
            .then(Mono.defer(() -> attempt(limited, checks, pending, admitted, deadline)));
      }
      if (denials != null) {
        denials.denied(limited.describe(), decision.limiting(), checks.keyOf(decision.limiting().policy()));
      }
      return Mono.just(decision);
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

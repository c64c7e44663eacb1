package dev.ratelimit.spring;

import dev.ratelimit.Decision;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.annotation.RateLimitExceededException;
import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.internal.expression.Pipeline;
import dev.ratelimit.internal.expression.SandboxContext;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.support.AopUtils;

/**
 * Applies {@link RateLimited}: evaluates keys and costs (parsed at start-up), checks all of a
 * method's policies together, then proceeds, waits, or throws {@link RateLimitExceededException}
 * (or calls the fallback method instead).
 * Ordered before {@code @Transactional} and {@code @Cacheable} by default ({@link RateLimitAdvisor}
 * carries the order, {@code ratelimit.aspect.order}).
 */
public class RateLimitAspect implements MethodInterceptor {
  private final RateLimiter limiter;
  private final RateLimitedMethods methods;
  private final CallRequest web; // no servlet type here: the aspect also runs without the servlet API
  private final DenialLog denials; // null unless ratelimit.log-denials=true
  /** Methods returning Mono, Flux or CompletionStage; null without Reactor. */
  private final ReactiveCalls reactive;

  /**
   * @param clientIp how a reactive call's {@code #clientIp} is resolved (the trusted proxies)
   */
  RateLimitAspect(RateLimiter limiter, RateLimitedMethods methods, CallRequest web, DenialLog denials,
      dev.ratelimit.internal.http.ForwardedClient clientIp) {
    this.limiter = limiter;
    this.methods = methods;
    this.web = web;
    this.denials = denials;
    this.reactive = ReactiveCalls.REACTOR ? new ReactiveCalls(limiter, methods, denials, this, clientIp) : null;
  }

  /**
   * Runs on the methods {@link RateLimitedMethods} finds rate-limited (the advisor's pointcut asks
   * it: what start-up validates is what applies, annotations on an interface or a superclass
   * included).
   */
  @Override
  public Object invoke(MethodInvocation call) throws Throwable {
    Method method = call.getMethod();
    Class<?> target = call.getThis() != null ? AopUtils.getTargetClass(call.getThis()) : method.getDeclaringClass();
    Method specific = AopUtils.getMostSpecificMethod(method, target);
    RateLimitedMethod limited = methods.find(specific).orElse(null);
    if (limited == null) {
      return call.proceed();
    }
    if (reactive != null && ReactiveCalls.isReactive(method.getReturnType())) {
      return reactive.invoke(call, limited); // checked per subscription, never blocking
    }
    SandboxContext context = variables(limited, call.getArguments());
    Object request = web.bind(context); // after the arguments: #request and the others win over a parameter's name
    Checks checks = evaluate(limited, context);
    long cost = checks.cost;
    long deadline = System.nanoTime() + limited.maxWait().toNanos();
    Map<String, List<Policy>> pending = new LinkedHashMap<>(checks.before); // keys not yet admitted
    List<Decision> admitted = new ArrayList<>();
    while (true) {
      // countWhen's policies first, reserved: a call they refuse is charged nowhere
      List<Held> held = checks.after.isEmpty() ? List.of() : new ArrayList<>();
      MultiDecision reserved = checks.after.isEmpty() ? null : reserve(checks.after, admitted, cost, held);
      MultiDecision decision;
      if (reserved != null && (!reserved.allowed() || (pending.isEmpty() && admitted.isEmpty()))) {
        decision = reserved; // refused (nothing held), or nothing to charge before the call
      } else {
        MultiDecision charged = check(pending, admitted, cost);
        decision = reserved == null ? charged : joined(reserved, charged);
        if (!charged.allowed()) {
          cancel(held); // refused by a policy charged before the call: it will not run
        }
      }
      if (decision.allowed()) {
        web.writeHeaders(request, method, specific, limited.mode(), decision);
        long delay = maxDelayMicros(decision) * 1_000L;
        if (delay > 0) {
          TimeUnit.NANOSECONDS.sleep(delay); // admitted by a leaky bucket: wait for our slot
        }
        return held.isEmpty() ? call.proceed() : proceedAndSettle(call, context, held, cost);
      }
      Decision limiting = decision.limiting();
      long retryNanos = limiting.retryAfterMicros() * 1_000L; // no Duration on every refusal
      if (limited.mode() != RateLimited.Mode.WAIT || System.nanoTime() + retryNanos > deadline) {
        if (denials != null) {
          denials.denied(limited.describe(), limiting, checks.keyOf(limiting.policy()));
        }
        RateLimitExceededException refused = new RateLimitExceededException(decision);
        if (limited.fallback() == null) {
          throw refused;
        }
        web.writeHeaders(request, method, specific, limited.mode(), decision); // the fallback's answer: r=0
        return limited.fallback().call(call.getThis(), call.getArguments(), refused);
      }
      TimeUnit.NANOSECONDS.sleep(Math.max(retryNanos, 1));
    }
  }

  /** A call's checks: by key, the policies charged before it runs and those charged after (countWhen). */
  static final class Checks {
    final Map<String, List<Policy>> before = new LinkedHashMap<>();
    final Map<String, List<Counted>> after = new LinkedHashMap<>();
    long cost;

    /** The key {@code policy} was checked under. */
    String keyOf(Policy policy) {
      for (Map.Entry<String, List<Policy>> entry : before.entrySet()) {
        for (Policy p : entry.getValue()) {
          if (p == policy || p.equals(policy)) {
            return entry.getKey();
          }
        }
      }
      for (Map.Entry<String, List<Counted>> entry : after.entrySet()) {
        for (Counted c : entry.getValue()) {
          if (c.policy() == policy || c.policy().equals(policy)) {
            return entry.getKey();
          }
        }
      }
      return null;
    }
  }

  /**
   * A policy reserved before the call and settled after it: committed when its countWhen holds
   * (or has none), at its costAfter (or the call's cost), given back otherwise.
   */
  record Counted(Policy policy, Pipeline.Condition countWhen, Pipeline.Cost costAfter) {}

  /** A countWhen policy's reservation for one call, settled by its condition once the call ends. */
  record Held(Counted counted, Reservation reservation) {}

  /**
   * Reserves the call's cost on each {@code after} policy, in order, one reservation each (each
   * countWhen is settled on its own), up to the first refusal; then those already taken are
   * cancelled and the refusal answered (with the {@code admitted} decisions before it). The ones
   * taken are put in {@code held}.
   */
  MultiDecision reserve(Map<String, List<Counted>> after, List<Decision> admitted, long cost, List<Held> held) {
    List<Decision> seen = new ArrayList<>();
    for (Map.Entry<String, List<Counted>> entry : after.entrySet()) {
      for (Counted counted : entry.getValue()) {
        Reservation reservation = limiter.reserve(entry.getKey(), counted.policy(), cost);
        seen.addAll(reservation.decisions().decisions());
        if (!reservation.allowed()) {
          cancel(held);
          List<Decision> decisions = new ArrayList<>(admitted);
          decisions.addAll(seen);
          return new MultiDecision(false, decisions);
        }
        held.add(new Held(counted, reservation));
      }
    }
    return new MultiDecision(true, seen);
  }

  /** Gives back every reservation in {@code held}: the call did not run (each attempt has its own list). */
  static void cancel(List<Held> held) {
    for (Held h : held) {
      h.reservation().cancel();
    }
  }

  static MultiDecision joined(MultiDecision reserved, MultiDecision charged) {
    List<Decision> decisions = new ArrayList<>(reserved.decisions());
    decisions.addAll(charged.decisions());
    return new MultiDecision(charged.allowed(), decisions);
  }

  /**
   * Runs the call, then settles each reservation: committed when its countWhen holds for what the
   * call returned ({@code #result}) or threw ({@code #exception}), cancelled otherwise. A countWhen
   * that fails counts the call (it ran), and then throws.
   */
  private Object proceedAndSettle(MethodInvocation call, SandboxContext context, List<Held> held, long cost)
      throws Throwable {
    Object result = null;
    Throwable thrown = null;
    try {
      result = call.proceed();
    } catch (Throwable t) {
      thrown = t;
    }
    RuntimeException failed = settle(held, context, result, thrown, cost);
    if (failed != null) {
      if (thrown != null) {
        failed.addSuppressed(thrown);
      }
      throw failed;
    }
    if (thrown != null) {
      throw thrown;
    }
    return result;
  }

  /**
   * Settles {@code held} for a call that returned {@code result} or threw {@code thrown}; the
   * first countWhen or costAfter failure (the others settled; a failed countWhen counts the call,
   * a failed costAfter commits the estimate), or null.
   */
  static RuntimeException settle(List<Held> held, SandboxContext context, Object result, Throwable thrown, long cost) {
    return settle(held, context, result, thrown, cost, (reservation, actual) -> {
      if (actual > 0) {
        reservation.commit(actual);
      } else {
        reservation.cancel();
      }
    });
  }

  /**
   * {@link #settle(List, SandboxContext, Object, Throwable, long)}, each reservation settled by
   * {@code settler} at its actual cost (0: given back).
   */
  static RuntimeException settle(List<Held> held, SandboxContext context, Object result, Throwable thrown, long cost,
      java.util.function.ObjLongConsumer<Reservation> settler) {
    context.setVariable("result", result);
    context.setVariable("exception", thrown);
    RuntimeException failed = null;
    for (Held h : held) {
      boolean holds = true;
      long actual = cost;
      try {
        holds = h.counted().countWhen() == null || h.counted().countWhen().test(context);
      } catch (RuntimeException e) {
        failed = failed == null ? e : failed; // counted: it ran
      }
      if (holds && h.counted().costAfter() != null) {
        try {
          long given = h.counted().costAfter().actual(context);
          actual = given >= 0 ? given : cost;
        } catch (RuntimeException e) {
          failed = failed == null ? e : failed; // the estimate stays charged
        }
      }
      settler.accept(h.reservation(), holds ? actual : 0);
    }
    return failed;
  }

  /** A context holding the call's arguments, by name and position, and {@code #method}. */
  SandboxContext variables(RateLimitedMethod limited, Object[] args) {
    SandboxContext context = methods.pipeline().sandbox().context();
    String[] names = limited.parameterNames();
    for (int i = 0; i < args.length; i++) {
      if (i < names.length) {
        context.setVariable(names[i], args[i]);
      }
      context.setVariable("p" + i, args[i]);
      context.setVariable("a" + i, args[i]);
    }
    context.setVariable("args", args);
    context.setVariable("method", limited.method().getName());
    return context;
  }

  /**
   * Evaluates each annotation's key: its policy is charged before the call, or after it when it has
   * a countWhen; the cost, one for the call (every annotation of a method has the same cost
   * expression), within the smallest capacity of them.
   *
   * @throws MissingRateLimitKeyException when a key is missing and {@code ratelimit.missing-key=reject}
   */
  Checks evaluate(RateLimitedMethod limited, SandboxContext context) {
    Checks checks = new Checks();
    long capacity = Long.MAX_VALUE;
    for (RateLimitedMethod.Limit limit : limited.limits()) {
      String key = limit.key() == null ? limited.describe() : limit.key().evaluate(context);
      if (key == null) {
        throw new MissingRateLimitKeyException(limited.describe(), limit.key().text());
      }
      Policy policy = limit.current(methods.policies());
      if (!limit.settledAfter()) {
        checks.before.computeIfAbsent(key, k -> new ArrayList<>()).add(policy);
      } else {
        checks.after.computeIfAbsent(key, k -> new ArrayList<>()).add(new Counted(policy, limit.countWhen(), limit.costAfter()));
      }
      capacity = Math.min(capacity, policy.capacity());
    }
    checks.cost = limited.limits().get(0).cost().evaluate(context, capacity);
    return checks;
  }

  /** The longest leaky-bucket delay among an admitted call's decisions, µs. */
  static long maxDelayMicros(MultiDecision decision) {
    long delay = 0;
    for (Decision d : decision.decisions()) {
      delay = Math.max(delay, d.delayMicros());
    }
    return delay;
  }

  /**
   * Checks the {@code pending} keys in order, one {@code checkAll} each (all or nothing per key),
   * up to the first denial. A key that passes leaves {@code pending} and its decisions join {@code
   * admitted}: a {@code WAIT} call that tries again checks only the keys still pending, so no key is
   * charged twice for one call. Keys are separate states (in a Cluster, separate servers), so
   * across keys nothing is atomic: what an earlier key consumed stays consumed when a later one
   * denies.
   */
  private MultiDecision check(Map<String, List<Policy>> pending, List<Decision> admitted, long cost) {
    if (pending.size() == 1 && admitted.isEmpty()) {
      Map.Entry<String, List<Policy>> only = pending.entrySet().iterator().next();
      MultiDecision decision = limiter.checkAll(only.getKey(), only.getValue(), cost);
      if (decision.allowed()) {
        pending.clear();
      }
      return decision;
    }
    for (Iterator<Map.Entry<String, List<Policy>>> keys = pending.entrySet().iterator(); keys.hasNext(); ) {
      Map.Entry<String, List<Policy>> entry = keys.next();
      MultiDecision part = limiter.checkAll(entry.getKey(), entry.getValue(), cost);
      if (!part.allowed()) {
        List<Decision> decisions = new ArrayList<>(admitted);
        decisions.addAll(part.decisions());
        return new MultiDecision(false, decisions);
      }
      admitted.addAll(part.decisions());
      keys.remove();
    }
    return new MultiDecision(true, List.copyOf(admitted));
  }
}

package dev.ratelimit.spring;

import dev.ratelimit.Decision;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.annotation.RateLimitExceededException;
import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.internal.expression.SandboxContext;
import java.lang.reflect.Method;
import java.time.Duration;
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
 * method's policies together, then proceeds, waits or throws {@link RateLimitExceededException}.
 * Ordered before {@code @Transactional} and {@code @Cacheable} by default ({@link RateLimitAdvisor}
 * carries the order, {@code ratelimit.aspect.order}).
 */
public class RateLimitAspect implements MethodInterceptor {
  private final RateLimiter limiter;
  private final RateLimitedMethods methods;
  private final CallRequest web; // no servlet type here: the aspect also runs without the servlet API
  private final DenialLog denials; // null unless ratelimit.log-denials=true

  RateLimitAspect(RateLimiter limiter, RateLimitedMethods methods, CallRequest web, DenialLog denials) {
    this.limiter = limiter;
    this.methods = methods;
    this.web = web;
    this.denials = denials;
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
    Map<String, List<Policy>> byKey = new LinkedHashMap<>();
    SandboxContext context = variables(limited, call.getArguments());
    Object request = web.bind(context); // after the arguments: #request and the others win over a parameter's name
    long cost = evaluate(limited, context, byKey);
    long deadline = System.nanoTime() + limited.maxWait().toNanos();
    Map<String, List<Policy>> pending = new LinkedHashMap<>(byKey); // keys not yet admitted
    List<Decision> admitted = new ArrayList<>();
    while (true) {
      MultiDecision decision = check(pending, admitted, cost);
      if (decision.allowed()) {
        web.writeHeaders(request, method, specific, limited.mode(), decision);
        long delay = maxDelayMicros(decision) * 1_000L;
        if (delay > 0) {
          TimeUnit.NANOSECONDS.sleep(delay); // admitted by a leaky bucket: wait for our slot
        }
        return call.proceed();
      }
      Duration retry = decision.limiting().retryAfter();
      if (limited.mode() != RateLimited.Mode.WAIT || System.nanoTime() + retry.toNanos() > deadline) {
        if (denials != null) {
          denials.denied(limited.describe(), decision.limiting(), keyOf(decision.limiting().policy(), byKey));
        }
        throw new RateLimitExceededException(decision);
      }
      TimeUnit.NANOSECONDS.sleep(Math.max(retry.toNanos(), 1));
    }
  }

  /** A context holding the call's arguments, by name and position, and {@code #method}. */
  private SandboxContext variables(RateLimitedMethod limited, Object[] args) {
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
   * Fills {@code byKey} with each evaluated key's policies; returns the cost, one for the call (every
   * annotation of a method has the same cost expression), within the smallest capacity of them.
   *
   * @throws MissingRateLimitKeyException when a key is missing and {@code ratelimit.missing-key=reject}
   */
  private long evaluate(RateLimitedMethod limited, SandboxContext context, Map<String, List<Policy>> byKey) {
    long capacity = Long.MAX_VALUE;
    for (RateLimitedMethod.Limit limit : limited.limits()) {
      String key = limit.key() == null ? limited.describe() : limit.key().evaluate(context);
      if (key == null) {
        throw new MissingRateLimitKeyException(limited.describe(), limit.key().text());
      }
      Policy policy = limit.current(methods.policies());
      byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(policy);
      capacity = Math.min(capacity, policy.capacity());
    }
    return limited.limits().get(0).cost().evaluate(context, capacity);
  }

  /** The key {@code policy} was checked under. */
  private static String keyOf(Policy policy, Map<String, List<Policy>> byKey) {
    for (Map.Entry<String, List<Policy>> entry : byKey.entrySet()) {
      for (Policy p : entry.getValue()) {
        if (p == policy || p.equals(policy)) {
          return entry.getKey();
        }
      }
    }
    return null;
  }

  /** The longest leaky-bucket delay among an admitted call's decisions, µs. */
  private static long maxDelayMicros(MultiDecision decision) {
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

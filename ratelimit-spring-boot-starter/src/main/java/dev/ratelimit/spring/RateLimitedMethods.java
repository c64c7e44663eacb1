package dev.ratelimit.spring;

import dev.ratelimit.Policy;
import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.internal.expression.Sandbox;
import dev.ratelimit.internal.expression.Variables;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.expression.Expression;
import org.springframework.util.ReflectionUtils;

/**
 * Finds and parses {@code @RateLimited} methods, once per method. {@link #inspect(Class)} runs for
 * every bean at start-up, so a bad expression or an unknown policy fails the application context
 * with a message naming the method and the expression.
 */
final class RateLimitedMethods {
  private static final Object NONE = new Object();

  private final PolicyRegistry policies;
  private final Sandbox sandbox;
  private final ParameterNameDiscoverer names = new DefaultParameterNameDiscoverer();
  private final Map<Method, Object> cache = new ConcurrentHashMap<>();
  /** Derived inline policy names, and the method each belongs to. */
  private final Map<String, String> derivedNames = new ConcurrentHashMap<>();

  /**
   * Parses in {@code sandbox}: the annotation's, which reads data objects (getters, maps, instance
   * methods) and the application's beans; what it would refuse on every call fails start-up.
   */
  RateLimitedMethods(PolicyRegistry policies, Sandbox sandbox) {
    this.policies = policies;
    this.sandbox = sandbox;
    policies.beforeUpdate(this::requirePossibleCosts);
  }

  /** The sandbox the expressions are parsed in, and evaluated in at every call. */
  Sandbox sandbox() {
    return sandbox;
  }

  /**
   * Refuses an update of the configured policy {@code name} to a capacity below the constant cost
   * of a method that names it: every call of the method would fail. Start-up refuses the same.
   */
  private void requirePossibleCosts(String name, Policy next) {
    for (Object found : cache.values()) {
      if (!(found instanceof RateLimitedMethod method)) {
        continue;
      }
      for (RateLimitedMethod.Limit limit : method.limits()) {
        long cost = name.equals(limit.configured()) ? constantCost(limit.cost()) : 0;
        if (cost > next.capacity()) {
          throw new IllegalArgumentException("policy '" + name + "' with capacity " + next.capacity()
              + " would refuse every call of " + method.describe() + ", whose cost is " + cost
              + "; keep the capacity at " + cost + " or more");
        }
      }
    }
  }

  /** The registry configured policies are resolved in, at start-up and at every call. */
  PolicyRegistry policies() {
    return policies;
  }

  /** Parses every rate-limited method of {@code type}; throws naming the first bad one. */
  void inspect(Class<?> type) {
    ReflectionUtils.doWithMethods(type, this::find,
        m -> !m.isBridge() && !m.isSynthetic() && m.getDeclaringClass() != Object.class);
  }

  /** The parsed limits of {@code method} (the most specific one of the target class), if any. */
  Optional<RateLimitedMethod> find(Method method) {
    Object found = cache.computeIfAbsent(method, m -> {
      RateLimitedMethod parsed = parse(m);
      return parsed == null ? NONE : parsed;
    });
    return found == NONE ? Optional.empty() : Optional.of((RateLimitedMethod) found);
  }

  /**
   * The {@code @RateLimited} annotations that apply to {@code method}: its own, found also on what
   * it implements or overrides; else, for a public method, its class's, except on {@code equals},
   * {@code hashCode} and {@code toString} and on the callbacks Spring MVC calls around a controller's
   * handlers ({@code @ModelAttribute}, {@code @InitBinder}, {@code @ExceptionHandler}), which would
   * count a request again. Empty when none: the method is not limited. Needs no bean, so the
   * advisor's pointcut asks it while beans are still being made.
   */
  static Set<RateLimited> annotations(Method method) {
    Set<RateLimited> own = AnnotatedElementUtils.findMergedRepeatableAnnotations(method, RateLimited.class);
    if (!own.isEmpty() || !Modifier.isPublic(method.getModifiers()) || isObjectMethod(method)
        || isMvcCallback(method)) {
      return own;
    }
    return AnnotatedElementUtils.findMergedRepeatableAnnotations(method.getDeclaringClass(), RateLimited.class);
  }

  /** Spring MVC's controller callbacks, by name: spring-web is optional. */
  private static final List<String> MVC_CALLBACKS = List.of("org.springframework.web.bind.annotation.ModelAttribute",
      "org.springframework.web.bind.annotation.InitBinder", "org.springframework.web.bind.annotation.ExceptionHandler");

  private static boolean isMvcCallback(Method method) {
    MergedAnnotations annotations = MergedAnnotations.from(method);
    return MVC_CALLBACKS.stream().anyMatch(annotations::isPresent);
  }

  private static boolean isObjectMethod(Method method) {
    return ReflectionUtils.isEqualsMethod(method) || ReflectionUtils.isHashCodeMethod(method)
        || ReflectionUtils.isToStringMethod(method);
  }

  private RateLimitedMethod parse(Method method) {
    Set<RateLimited> annotations = annotations(method);
    if (annotations.isEmpty()) {
      return null;
    }
    String where = method.getDeclaringClass().getName() + "." + method.getName();
    String[] parameterNames = names.getParameterNames(method);
    parameterNames = parameterNames == null ? new String[0] : parameterNames;
    Set<String> callVariables = variables(method, parameterNames);
    // a class's annotation covers methods of every signature: a key naming a parameter some of them
    // lack shares the missing-key bucket there (documented), so it must name one some method has; a
    // cost is a number on every call, so its variables must be the method's own
    boolean own = !AnnotatedElementUtils.findMergedRepeatableAnnotations(method, RateLimited.class).isEmpty();
    Variables keyVariables = variables(own ? callVariables : classVariables(method.getDeclaringClass(), callVariables),
        method, parameterNames);
    Variables costVariables = variables(callVariables, method, parameterNames);
    List<RateLimitedMethod.Limit> limits = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    boolean wait = true;
    Duration maxWait = null;
    int index = 0;
    for (RateLimited a : annotations) {
      Policy policy = policy(a, method, annotations.size() > 1 ? index : -1, where);
      if (!seen.add(policy.name() + "/" + policy.algorithm())) {
        throw new IllegalStateException("@RateLimited on " + where + " uses policy '" + policy.name()
            + "' twice; give each annotation its own policy");
      }
      Expression key = a.key().isBlank() ? null : parse(a.key(), "key", where, keyVariables);
      Expression cost = parse(a.cost(), "cost", where, costVariables);
      String configured = a.policy().isEmpty() ? null : a.policy();
      limits.add(new RateLimitedMethod.Limit(policy, configured, key, a.key(), cost, a.cost()));
      wait &= a.mode() == RateLimited.Mode.WAIT;
      Duration w = window(a.maxWait(), "maxWait", where);
      maxWait = maxWait == null || w.compareTo(maxWait) < 0 ? w : maxWait;
      index++;
    }
    for (RateLimitedMethod.Limit limit : limits) {
      if (!limit.costSource().equals(limits.get(0).costSource())) {
        throw new IllegalStateException("@RateLimited on " + where + ": every annotation of a method charges"
            + " the call one cost, but they give '" + limits.get(0).costSource() + "' and '" + limit.costSource()
            + "'; give them all the same cost expression");
      }
      requirePossibleCost(limit, where);
    }
    return new RateLimitedMethod(method, parameterNames, List.copyOf(limits),
        wait ? RateLimited.Mode.WAIT : RateLimited.Mode.REJECT, maxWait);
  }

  /**
   * {@code names} as the sandbox's variables; messages list the parameters (or say how to get their
   * names) and the aspect's variables.
   */
  private static Variables variables(Set<String> names, Method method, String[] parameterNames) {
    String parameters = parameterNames.length > 0
        ? String.join(", ", List.of(parameterNames).stream().map(n -> "#" + n).toList()) + " (the parameters), "
        : method.getParameterCount() > 0 ? "no parameter names (compile with -parameters, or use #p0), " : "";
    Variables.Builder variables = Variables.builder().describedAs(parameters
        + "#p0/#a0 by position, #args, #method, #request, #clientIp, #clientNetwork and #principal");
    names.forEach(variables::add);
    return variables.build();
  }

  /** What expressions of {@code method} may read: its parameters and the aspect's variables. */
  private static Set<String> variables(Method method, String[] parameterNames) {
    Set<String> variables = new java.util.LinkedHashSet<>(List.of(parameterNames));
    variables.addAll(List.of("args", "method", "request", "clientIp", "clientNetwork", "principal"));
    for (int i = 0; i < method.getParameterCount(); i++) {
      variables.add("p" + i);
      variables.add("a" + i);
    }
    return variables;
  }

  /** {@code variables} and the parameter names of every public method of {@code type}. */
  private Set<String> classVariables(Class<?> type, Set<String> variables) {
    Set<String> all = new HashSet<>(variables);
    for (Method m : type.getMethods()) {
      String[] names = this.names.getParameterNames(m);
      all.addAll(variables(m, names == null ? new String[0] : names));
    }
    return all;
  }

  /**
   * The value of a constant cost expression ({@code 10}, {@code -1}, {@code 2 * 3}: no variable,
   * property, call or reference); 0 when it is not constant or fails (a call would fail the same
   * way, naming it); -1 when it is constant but not a whole number.
   */
  private long constantCost(Expression cost) {
    if (!Sandbox.isConstant(cost)) {
      return 0;
    }
    Object value;
    try {
      value = cost.getValue(sandbox.context());
    } catch (RuntimeException e) { // EvaluationException, or an ArithmeticException of 1/0
      return 0;
    }
    if (!(value instanceof Number n) || n.longValue() != n.doubleValue()) {
      return -1;
    }
    return n.longValue() == 0 ? -1 : n.longValue();
  }

  /**
   * Refuses a constant cost ({@code 10}, {@code -1}, {@code 2 * 3}: no variable, property, call or
   * reference) below 1 or above the policy's capacity: no call could pass.
   */
  private void requirePossibleCost(RateLimitedMethod.Limit limit, String where) {
    long cost = constantCost(limit.cost());
    long capacity = limit.policy().capacity();
    if (cost != 0 && (cost < 1 || cost > capacity)) {
      throw new IllegalStateException("@RateLimited on " + where + ": cost " + limit.costSource()
          + " must be a whole number from 1 to the capacity " + capacity + " of policy '" + limit.policy().name()
          + "': no call could pass");
    }
  }

  private Policy policy(RateLimited a, Method method, int index, String where) {
    boolean inline = a.limit() > 0 || !a.window().isEmpty();
    if (!a.policy().isEmpty()) {
      if (inline) {
        throw new IllegalStateException("@RateLimited on " + where + " names policy '" + a.policy()
            + "' and an inline limit/window; use one or the other");
      }
      try {
        return policies.get(a.policy(), "@RateLimited on " + where);
      } catch (IllegalArgumentException e) {
        throw new IllegalStateException(e.getMessage(), e);
      }
    }
    if (a.limit() < 1 || a.window().isEmpty()) {
      throw new IllegalStateException("@RateLimited on " + where + " needs a policy name or both "
          + "limit (>= 1) and window (e.g. \"1m\"); was limit=" + a.limit() + ", window='" + a.window() + "'");
    }
    String name = !a.name().isEmpty() ? a.name() : derivedName(method, index, where);
    try {
      Policy policy = Policy.of(a.limit(), Policy.parseWindow(a.window()), a.algorithm()).withName(name);
      return a.burst() > 0 ? policy.withBurst(a.burst()) : policy;
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException("@RateLimited on " + where + ": " + e.getMessage(), e);
    }
  }

  /**
   * An inline policy's default name: {@code Class.method}, with the parameter types when the class
   * has other methods of that name, and {@code #i} for the i-th annotation of several. Policies are
   * told apart by name (a key's state is per name and algorithm), so a name another method already
   * derived (a class of the same simple name in another package) is refused, naming both: they
   * would share counters.
   */
  private String derivedName(Method method, int index, String where) {
    Class<?> type = method.getDeclaringClass();
    long sameName = java.util.Arrays.stream(type.getDeclaredMethods())
        .filter(m -> m.getName().equals(method.getName()) && !m.isBridge() && !m.isSynthetic()).count();
    String parameters = sameName < 2 ? "" : java.util.Arrays.stream(method.getParameterTypes())
        .map(Class::getSimpleName).collect(java.util.stream.Collectors.joining(",", "(", ")"));
    String name = type.getSimpleName() + "." + method.getName() + parameters + (index >= 0 ? "#" + index : "");
    String owner = type.getName() + "." + method.getName() + parameters;
    String before = derivedNames.putIfAbsent(name, owner);
    if (before != null && !before.equals(owner)) {
      throw new IllegalStateException("@RateLimited on " + where + " derives the policy name '" + name
          + "', which " + before + " derives too: they would share counters; give one a name (name = \"...\")");
    }
    return name;
  }

  /** Parses an attribute's expression in the sandbox, refusing at start-up what it would refuse at every call. */
  private Expression parse(String source, String attribute, String where, Variables variables) {
    try {
      return sandbox.parse(source, "@RateLimited on " + where + ": " + attribute, variables);
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  private static Duration window(String text, String attribute, String where) {
    try {
      return Policy.parseWindow(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException("@RateLimited on " + where + ": bad " + attribute + ": " + e.getMessage(), e);
    }
  }

  /** Used by tests and diagnostics: how many methods were parsed. */
  int size() {
    return (int) cache.values().stream().filter(v -> v != NONE).count();
  }
}

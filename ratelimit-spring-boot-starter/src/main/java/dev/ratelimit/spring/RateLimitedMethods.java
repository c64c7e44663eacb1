package dev.ratelimit.spring;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Policy;
import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.http.PolicyNames;
import dev.ratelimit.internal.expression.Pipeline;
import dev.ratelimit.internal.expression.Shape;
import dev.ratelimit.internal.expression.Values;
import dev.ratelimit.internal.expression.Variables;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
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
import org.springframework.util.ReflectionUtils;

/**
 * Finds and parses {@code @RateLimited} methods, once per method. {@link #inspect(Class)} runs for
 * every bean at start-up, so a bad expression or an unknown policy fails the application context
 * with a message naming the method and the expression.
 */
final class RateLimitedMethods {
  private static final Object NONE = new Object();

  private final PolicyRegistry policies;
  private final Pipeline pipeline;
  /** Whether the limiter takes reservations, which countWhen needs; asked when a countWhen is parsed. */
  private final java.util.function.BooleanSupplier reservations;
  private final ParameterNameDiscoverer names = new DefaultParameterNameDiscoverer();
  private final Map<Method, Object> cache = new ConcurrentHashMap<>();
  /** Derived inline policy names, and the method each belongs to. */
  private final Map<String, String> derivedNames = new ConcurrentHashMap<>();

  /**
   * Parses in {@code pipeline}'s sandbox: the annotation's, which reads data objects (getters,
   * maps, instance methods) and the application's beans; what it would refuse on every call fails
   * start-up.
   */
  RateLimitedMethods(PolicyRegistry policies, Pipeline pipeline, java.util.function.BooleanSupplier reservations) {
    this.policies = policies;
    this.pipeline = pipeline;
    this.reservations = reservations;
    policies.beforeUpdate(this::requirePossibleUpdate);
  }

  /** The pipeline the expressions are parsed in, and evaluated in at every call. */
  Pipeline pipeline() {
    return pipeline;
  }

  /**
   * Refuses an update of the configured policy {@code name} that start-up would refuse for a method
   * naming it: a capacity below the method's constant cost (every call would fail), or a leaky
   * bucket for a {@code countWhen} (its delay cannot shape calls charged after they ran).
   */
  private void requirePossibleUpdate(String name, Policy next) {
    for (Object found : cache.values()) {
      if (!(found instanceof RateLimitedMethod method)) {
        continue;
      }
      for (RateLimitedMethod.Limit limit : method.limits()) {
        if (!name.equals(limit.configured())) {
          continue;
        }
        Long cost = limit.cost().constant();
        if (cost != null && cost > next.capacity()) {
          throw new IllegalArgumentException("policy '" + name + "' with capacity " + next.capacity()
              + " would refuse every call of " + method.describe() + ", whose cost is " + cost
              + "; keep the capacity at " + cost + " or more");
        }
        if (limit.settledAfter() && next.algorithm() == Algorithm.LEAKY_BUCKET) {
          throw new IllegalArgumentException("policy '" + name + "' cannot become a LEAKY_BUCKET: "
              + method.describe() + " charges it after its calls (countWhen), where a delay cannot shape them");
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
      Pipeline.Key key = null;
      Pipeline.Cost cost;
      Pipeline.Condition countWhen = null;
      Pipeline.Cost costAfter = null;
      try {
        if (!a.key().isBlank()) {
          key = pipeline.key(a.key(), "@RateLimited on " + where, keyVariables, "");
          requireKeyType(key, method, parameterNames, where);
        }
        cost = pipeline.cost(a.cost(), "@RateLimited on " + where, costVariables);
        cost.requirePossible(policy.capacity(), "policy '" + policy.name() + "'");
        if (!a.countWhen().isBlank()) {
          countWhen = countWhen(a.countWhen(), method, parameterNames, callVariables, own, policy, where);
        }
        if (!a.costAfter().isBlank()) {
          costAfter = costAfter(a.costAfter(), method, parameterNames, callVariables, own, policy, where);
        }
      } catch (IllegalArgumentException e) {
        throw new IllegalStateException(e.getMessage(), e);
      }
      String configured = a.policy().isEmpty() ? null : a.policy();
      limits.add(new RateLimitedMethod.Limit(policy, configured, key, cost, countWhen, costAfter));
      wait &= a.mode() == RateLimited.Mode.WAIT;
      Duration w = window(a.maxWait(), "maxWait", where);
      maxWait = maxWait == null || w.compareTo(maxWait) < 0 ? w : maxWait;
      index++;
    }
    for (RateLimitedMethod.Limit limit : limits) {
      String first = limits.get(0).cost().text();
      if (!limit.cost().text().equals(first)) {
        throw new IllegalStateException("@RateLimited on " + where + ": every annotation of a method charges"
            + " the call one cost, but they give '" + first + "' and '" + limit.cost().text()
            + "'; give them all the same cost expression");
      }
    }
    return new RateLimitedMethod(method, parameterNames, List.copyOf(limits),
        wait ? RateLimited.Mode.WAIT : RateLimited.Mode.REJECT, maxWait, fallback(annotations, method, where));
  }

  /** The one fallback the annotations name, or null; two names are refused. */
  private static Fallback fallback(Set<RateLimited> annotations, Method method, String where) {
    String name = null;
    for (RateLimited a : annotations) {
      String named = a.fallbackMethod().strip();
      if (named.isEmpty()) {
        continue;
      }
      if (name != null && !name.equals(named)) {
        throw new IllegalStateException("@RateLimited on " + where + " names two fallback methods, '" + name
            + "' and '" + named + "'; a refused call has one answer: name it on one annotation, or the same on all");
      }
      name = named;
    }
    return name == null ? null : Fallback.find(method, name, where);
  }

  /**
   * Parses a {@code countWhen}, on the variables {@link #outcomeVariables} gives.
   *
   * @throws IllegalArgumentException naming the method and the expression, or as outcomeVariables
   */
  private Pipeline.Condition countWhen(String text, Method method, String[] parameterNames, Set<String> callVariables,
      boolean own, Policy policy, String where) {
    Variables variables = outcomeVariables("countWhen", method, parameterNames, callVariables, own, policy, where);
    return pipeline.condition(text, "@RateLimited on " + where + ": countWhen", variables, true, "the call was counted");
  }

  /**
   * Parses a {@code costAfter}: a cost read after the call, with the variables a {@code countWhen}
   * has.
   *
   * @throws IllegalArgumentException as {@link #countWhen}
   */
  private Pipeline.Cost costAfter(String text, Method method, String[] parameterNames, Set<String> callVariables,
      boolean own, Policy policy, String where) {
    Variables variables = outcomeVariables("costAfter", method, parameterNames, callVariables, own, policy, where);
    return pipeline.cost(text, "@RateLimited on " + where + ": costAfter", variables);
  }

  /**
   * What an expression read after the call may read: the call's variables, {@code #exception}, and
   * {@code #result} unless the method's own annotation is on a {@code void} method (a class's
   * covers methods of every return type: there {@code #result} of a {@code void} one is null).
   *
   * @throws IllegalArgumentException when the limiter takes no reservations, or for a leaky bucket
   */
  private Variables outcomeVariables(String attribute, Method method, String[] parameterNames,
      Set<String> callVariables, boolean own, Policy policy, String where) {
    if (!reservations.getAsBoolean()) {
      throw new IllegalArgumentException("@RateLimited on " + where + ": " + attribute + " reserves the call's cost"
          + " before it runs and settles it after, but the RateLimiter bean does not take reservations"
          + " (RateLimiter.takesReservations() is false: a Backend whose reserves() is false); use the in-memory"
          + " or the Redis backend, or drop " + attribute);
    }
    if (policy.algorithm() == Algorithm.LEAKY_BUCKET) {
      throw new IllegalArgumentException("@RateLimited on " + where + ": " + attribute + " settles a call after it"
          + " ran, where the delay of policy '" + policy.name() + "' (LEAKY_BUCKET) cannot shape it; use GCRA, which"
          + " admits the same calls");
    }
    Set<String> names = new java.util.LinkedHashSet<>(callVariables);
    boolean reactive = ReactiveCalls.isReactive(method.getReturnType());
    boolean result = !own || method.getReturnType() != void.class;
    if (result) {
      names.add("result");
    }
    names.add("exception");
    Map<String, Shape> shapes = shapes(method, parameterNames, true);
    if (reactive) {
      shapes.put("result", Shape.ANY); // what the publisher emitted, not the publisher
    }
    return variables(names, shapes, method, parameterNames, reactive
        ? "#result, #exception (the last value the publisher emitted, or the error it signalled)"
        : result ? "#result, #exception (what the call returned or threw)" : "#exception (what the call threw)");
  }

  /**
   * {@code names} as the sandbox's variables of a key or a cost; messages list the parameters (or
   * say how to get their names) and the aspect's variables.
   */
  private static Variables variables(Set<String> names, Method method, String[] parameterNames) {
    return variables(names, shapes(method, parameterNames, false), method, parameterNames, "");
  }

  /**
   * {@link #variables(Set, Method, String[])} with {@code shapes}, the messages listing {@code more}
   * (a text ending with ", ") first.
   */
  private static Variables variables(Set<String> names, Map<String, Shape> shapes, Method method,
      String[] parameterNames, String more) {
    String parameters = parameterNames.length > 0
        ? String.join(", ", List.of(parameterNames).stream().map(n -> "#" + n).toList()) + " (the parameters), "
        : method.getParameterCount() > 0 ? "no parameter names (compile with -parameters, or use #p0), " : "";
    Variables.Builder variables = Variables.builder().describedAs(parameters + (more.isEmpty() ? "" : more + ", ")
        + "#p0/#a0 by position, #args, #method, #request, #clientIp, #clientNetwork and #principal");
    names.forEach(name -> variables.add(name, shapes.getOrDefault(name, Shape.ANY)));
    return variables.build();
  }

  /** The aspect's variables, set after the parameters: a parameter of such a name is not what it reads. */
  private static final Set<String> ASPECT_VARIABLES = Set.of("args", "method", "request", "clientIp", "clientNetwork",
      "principal");

  /**
   * What the method's signature tells of its variables' values ({@link Shape#of}): each parameter's
   * declared type, by name and by position, {@code #method} (a text), and with {@code outcome} (a
   * countWhen) {@code #result}, of the declared return type. Where one is of a final class,
   * start-up refuses a property or method its values do not have, or the sandbox would not use, as
   * every call would. A name the aspect also sets (with {@code outcome}, {@code #exception} too), or
   * two variables of one name, is left unknown.
   */
  private static Map<String, Shape> shapes(Method method, String[] parameterNames, boolean outcome) {
    Map<String, Shape> shapes = new HashMap<>();
    Class<?>[] types = method.getParameterTypes();
    for (int i = 0; i < types.length; i++) {
      shapes.put("p" + i, Shape.of(types[i]));
      shapes.put("a" + i, Shape.of(types[i]));
    }
    for (int i = 0; i < parameterNames.length && i < types.length; i++) {
      String name = parameterNames[i];
      shapes.put(name, shapes.containsKey(name) ? Shape.ANY : Shape.of(types[i]));
    }
    ASPECT_VARIABLES.forEach(shapes::remove);
    shapes.put("method", Shape.of(String.class)); // the method's name
    if (outcome) {
      shapes.put("result", Shape.of(method.getReturnType())); // the value returned; null for a void method
      shapes.remove("exception");
    }
    return shapes;
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
   * Refuses a key that is a parameter ({@code #user}, {@code #p0}) of a type whose values are never
   * keys (an array, a class of the application's, see {@link Values}): every call would share the
   * missing-key bucket. An interface, {@code Object} or a number may hold a key, and passes.
   */
  private static void requireKeyType(Pipeline.Key key, Method method, String[] parameterNames, String where) {
    String text = key.text().strip();
    if (!text.startsWith("#")) {
      return;
    }
    String name = text.substring(1);
    if (!name.matches("[A-Za-z_$][\\w$]*")) {
      return; // more than a variable: what it gives is known when it runs
    }
    int index = List.of(parameterNames).indexOf(name);
    if (index < 0 && name.length() > 1 && name.length() < 6 && (name.charAt(0) == 'p' || name.charAt(0) == 'a')
        && name.substring(1).chars().allMatch(Character::isDigit)) {
      index = Integer.parseInt(name.substring(1));
    }
    if (index < 0 || index >= method.getParameterCount()) {
      return;
    }
    Class<?> type = method.getParameterTypes()[index];
    if (!Values.mayBeKey(type)) {
      throw new IllegalArgumentException("@RateLimited on " + where + ": key expression '" + key.text() + "' gives a "
          + type.getTypeName() + ", which is never a key: a key is a text, a number, a boolean, a character, an"
          + " enum, a UUID, or a collection or map of them; read one of its values (such as #user.id)");
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
      PolicyNames.requireFitsHeader(name, a.name().isEmpty() ? "derived; set name = \"...\""
          : "name = \"" + name + "\"");
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

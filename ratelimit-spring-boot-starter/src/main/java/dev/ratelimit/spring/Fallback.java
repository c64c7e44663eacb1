package dev.ratelimit.spring;

import dev.ratelimit.annotation.RateLimitExceededException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * A {@code @RateLimited(fallbackMethod = ...)}: the method called instead of throwing {@link
 * RateLimitExceededException}, found once at start-up. It takes the limited method's parameter types,
 * optionally followed by the exception (its type or a supertype), and returns what the limited
 * method may return.
 */
final class Fallback {
  private final Method method;
  private final boolean takesException;

  private Fallback(Method method, boolean takesException) {
    this.method = method;
    this.takesException = takesException;
    ReflectionUtils.makeAccessible(method);
  }

  /**
   * The fallback named {@code name} for {@code limited}, among the methods of its class and
   * superclasses: one taking the exception wins, of several the one whose exception type is the
   * most specific.
   *
   * @throws IllegalStateException naming the limited method ({@code where}), the name and the
   *     signature expected, when there is none
   */
  static Fallback find(Method limited, String name, String where) {
    Class<?>[] parameters = limited.getParameterTypes();
    Method plain = null;
    Method withException = null;
    List<Method> named = new ArrayList<>();
    for (Method candidate : ReflectionUtils.getUniqueDeclaredMethods(limited.getDeclaringClass(),
        m -> m.getName().equals(name) && !m.isBridge() && !m.isSynthetic())) {
      named.add(candidate);
      Class<?>[] types = candidate.getParameterTypes();
      if (!ClassUtils.isAssignable(limited.getReturnType(), candidate.getReturnType())
          || types.length < parameters.length || types.length > parameters.length + 1
          || !Arrays.equals(types, 0, parameters.length, parameters, 0, parameters.length)) {
        continue;
      }
      if (types.length == parameters.length) {
        plain = candidate;
      } else if (types[parameters.length].isAssignableFrom(RateLimitExceededException.class)
          && (withException == null || withException.getParameterTypes()[parameters.length]
              .isAssignableFrom(types[parameters.length]))) {
        withException = candidate;
      }
    }
    if (withException != null) {
      return new Fallback(withException, true);
    }
    if (plain != null) {
      return new Fallback(plain, false);
    }
    String args = Arrays.stream(parameters).map(Class::getSimpleName).collect(Collectors.joining(", "));
    throw new IllegalStateException("@RateLimited on " + where + ": fallbackMethod '" + name + "' names no method of "
        + limited.getDeclaringClass().getName() + " (or its superclasses) that can answer a refused call; expected "
        + limited.getReturnType().getSimpleName() + " " + name + "(" + args + ")" + " or "
        + limited.getReturnType().getSimpleName() + " " + name + "(" + args + (args.isEmpty() ? "" : ", ")
        + "RateLimitExceededException e), any visibility, returning " + limited.getReturnType().getSimpleName()
        + " or a subtype" + (named.isEmpty() ? "" : "; found " + named.stream().map(Fallback::signature).sorted()
            .collect(Collectors.joining(", "))));
  }

  private static String signature(Method m) {
    return m.getReturnType().getSimpleName() + " " + m.getName() + "(" + Arrays.stream(m.getParameterTypes())
        .map(Class::getSimpleName).collect(Collectors.joining(", ")) + ")";
  }

  /** The fallback's name, for messages. */
  String name() {
    return method.getName();
  }

  /**
   * Calls the fallback on {@code target} with the call's {@code arguments} (and {@code refused}, if
   * it takes it); what it throws is thrown as it is.
   */
  Object call(Object target, Object[] arguments, RateLimitExceededException refused) throws Throwable {
    Object[] args = arguments;
    if (takesException) {
      args = Arrays.copyOf(arguments, arguments.length + 1);
      args[arguments.length] = refused;
    }
    try {
      return method.invoke(java.lang.reflect.Modifier.isStatic(method.getModifiers()) ? null : target, args);
    } catch (InvocationTargetException e) {
      throw e.getTargetException();
    }
  }
}

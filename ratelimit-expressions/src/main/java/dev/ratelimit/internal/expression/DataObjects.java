package dev.ratelimit.internal.expression;

import java.lang.reflect.Field;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import org.springframework.core.convert.TypeDescriptor;
import org.springframework.expression.AccessException;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.MethodExecutor;
import org.springframework.expression.spel.support.ReflectiveMethodResolver;
import org.springframework.expression.spel.support.ReflectivePropertyAccessor;

/**
 * How a {@link Sandbox} with {@link Sandbox.Builder#dataObjects data objects} reads their properties
 * and calls their methods: one set of rules, which the evaluation applies to each value and
 * {@link Sandbox#parse} to a variable whose class is known when it is parsed (a final class, see
 * {@link Shape#of}). Spring's reflective accessor and resolver, limited as its data-binding ones are
 * (never a method of {@code Object} or {@code Class}, nothing of a class loader, no static method
 * called) and further: nothing that gives a {@code Class} or a class loader (an enum's
 * {@code getDeclaringClass()}), and nothing read of a {@code Class} (its class's static members).
 */
final class DataObjects {
  /**
   * What Spring's reflective accessor, without these limits, would read: for parse-time messages
   * that say why a property that exists is not read.
   */
  static final Properties ANY_PROPERTY = new Properties(false);

  final Properties properties = new Properties(true);
  final Methods methods = new Methods();

  /** Whether values of {@code type} are classes or class loaders: never reached, never read. */
  static boolean reflective(Class<?> type) {
    return type == Class.class || ClassLoader.class.isAssignableFrom(type);
  }

  /**
   * Why {@code method} is not used on a {@code target}, or null when it may be: as a property's
   * getter, or (with {@code call}) as a method called.
   */
  static String refusal(Method method, Class<?> target, boolean call) {
    Class<?> declaring = method.getDeclaringClass();
    if (declaring == Object.class || declaring == Class.class || reflective(target)) {
      return "it is " + (declaring == Object.class ? "Object's" : "a class's or a class loader's");
    }
    if (call && Modifier.isStatic(method.getModifiers())) {
      return "it is static";
    }
    if (reflective(method.getReturnType())) {
      return "it gives a " + method.getReturnType().getName();
    }
    return null;
  }

  /** Reads getters (and record-style accessors) and public fields, never writes; nothing of a Class. */
  static final class Properties extends ReflectivePropertyAccessor {
    private final boolean limited;

    Properties(boolean limited) {
      super(false);
      this.limited = limited;
    }

    @Override
    public boolean canRead(EvaluationContext context, Object target, String name) throws AccessException {
      return !(limited && target instanceof Class<?>) && super.canRead(context, target, name);
    }

    @Override
    protected boolean isCandidateForProperty(Method method, Class<?> targetClass) {
      return !limited || refusal(method, targetClass, false) == null;
    }

    @Override
    protected Field findField(String name, Class<?> type, boolean mustBeStatic) {
      Field field = super.findField(name, type, mustBeStatic);
      return field == null || (limited && (reflective(field.getType()) || reflective(type))) ? null : field;
    }

    /**
     * What reading {@code name} of a value of class {@code type} uses, as {@link #canRead} finds it:
     * a getter, a record-style accessor or a public field; null when none may be read.
     */
    Member member(Class<?> type, String name) {
      if (limited && reflective(type)) {
        return null;
      }
      Method getter = findGetterForProperty(name, type, false);
      return getter != null ? getter : findField(name, type, false);
    }
  }

  /** Calls public instance methods; none of a Class. */
  static final class Methods extends ReflectiveMethodResolver {
    @Override
    public MethodExecutor resolve(EvaluationContext context, Object target, String name,
        List<TypeDescriptor> argumentTypes) throws AccessException {
      return target instanceof Class<?> ? null : super.resolve(context, target, name, argumentTypes);
    }

    @Override
    protected boolean isCandidateForInvocation(Method method, Class<?> targetClass) {
      return refusal(method, targetClass, true) == null;
    }

    /** The public methods named {@code name} of values of class {@code type}, those called or not. */
    List<Method> named(Class<?> type, String name) {
      List<Method> named = new ArrayList<>();
      for (Method method : getMethods(type)) {
        if (method.getName().equals(name) && !method.isBridge()) {
          named.add(method);
        }
      }
      return named;
    }
  }
}

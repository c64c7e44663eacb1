package dev.ratelimit.internal.expression;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.ConstructorResolver;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.MethodResolver;
import org.springframework.expression.OperatorOverloader;
import org.springframework.expression.PropertyAccessor;
import org.springframework.expression.TypeComparator;
import org.springframework.expression.TypeConverter;
import org.springframework.expression.TypeLocator;
import org.springframework.expression.TypedValue;
import org.springframework.expression.spel.SpelEvaluationException;
import org.springframework.expression.spel.SpelMessage;
import org.springframework.expression.spel.support.StandardOperatorOverloader;
import org.springframework.expression.spel.support.StandardTypeComparator;
import org.springframework.expression.spel.support.StandardTypeConverter;

/**
 * The context a {@link Sandbox}'s expressions run in: its variables, the property readers, method
 * resolvers and beans the sandbox allows, and nothing else: no type locator, no constructors, no
 * assignment, a null root object. The second fence: what got past {@link Sandbox#parse} still
 * cannot run. Each evaluation allocates only its variables. Not thread-safe: one per evaluation.
 *
 * <p>Internal: shared by the servlet filter and the Spring Boot starter. Not an API; it may change
 * in any release.
 */
public final class SandboxContext implements EvaluationContext {
  private static final TypeLocator NO_TYPES = typeName -> {
    throw new SpelEvaluationException(SpelMessage.TYPE_NOT_FOUND, typeName);
  };
  private static final TypeConverter CONVERTER = new StandardTypeConverter();
  private static final TypeComparator COMPARATOR = new StandardTypeComparator();
  private static final OperatorOverloader OPERATORS = new StandardOperatorOverloader();

  private final Sandbox sandbox;
  private final Map<String, Object> variables = new HashMap<>();

  SandboxContext(Sandbox sandbox) {
    this.sandbox = sandbox;
  }

  @Override
  public TypedValue getRootObject() {
    return TypedValue.NULL;
  }

  @Override
  public List<PropertyAccessor> getPropertyAccessors() {
    return sandbox.propertyAccessors;
  }

  @Override
  public List<ConstructorResolver> getConstructorResolvers() {
    return List.of();
  }

  @Override
  public List<MethodResolver> getMethodResolvers() {
    return sandbox.methodResolvers;
  }

  @Override
  public BeanResolver getBeanResolver() {
    return sandbox.beans;
  }

  @Override
  public TypeLocator getTypeLocator() {
    return NO_TYPES;
  }

  @Override
  public TypeConverter getTypeConverter() {
    return CONVERTER;
  }

  @Override
  public TypeComparator getTypeComparator() {
    return COMPARATOR;
  }

  @Override
  public OperatorOverloader getOperatorOverloader() {
    return OPERATORS;
  }

  @Override
  public void setVariable(String name, Object value) {
    variables.put(name, value);
  }

  /** Sets {@code name} to what {@code value} gives, computed on its first lookup (not at all if unused). */
  public void setLazyVariable(String name, Supplier<?> value) {
    variables.put(name, new Lazy(value));
  }

  @Override
  public Object lookupVariable(String name) {
    Object value = variables.get(name);
    if (value instanceof Lazy lazy) {
      value = lazy.value().get();
      variables.put(name, value);
    }
    return value;
  }

  /** A variable's value, not computed yet. */
  private record Lazy(Supplier<?> value) {}

  @Override
  public boolean isAssignmentEnabled() {
    return false;
  }
}

package dev.ratelimit.spring;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MapAccessor;
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
import org.springframework.expression.spel.support.DataBindingMethodResolver;
import org.springframework.expression.spel.support.DataBindingPropertyAccessor;
import org.springframework.expression.spel.support.StandardOperatorOverloader;
import org.springframework.expression.spel.support.StandardTypeComparator;
import org.springframework.expression.spel.support.StandardTypeConverter;

/**
 * The context key and cost expressions run in: variables, read-only properties, instance methods
 * of data objects and {@code @bean} references; no type references ({@code T(...)}), no
 * constructors, no {@code java.lang.Class} methods, no assignment. The resolvers are shared; each
 * evaluation only allocates its variables.
 */
final class SandboxedEvaluationContext implements EvaluationContext {
  private static final List<PropertyAccessor> PROPERTY_ACCESSORS =
      List.of(new MapAccessor(), DataBindingPropertyAccessor.forReadOnlyAccess());
  private static final List<MethodResolver> METHOD_RESOLVERS =
      List.of(DataBindingMethodResolver.forInstanceMethodInvocation());
  private static final TypeLocator NO_TYPES = typeName -> {
    throw new SpelEvaluationException(SpelMessage.TYPE_NOT_FOUND, typeName);
  };
  private static final TypeConverter CONVERTER = new StandardTypeConverter();
  private static final TypeComparator COMPARATOR = new StandardTypeComparator();
  private static final OperatorOverloader OPERATORS = new StandardOperatorOverloader();

  private final BeanResolver beans;
  private final Map<String, Object> variables = new HashMap<>();

  SandboxedEvaluationContext(BeanResolver beans) {
    this.beans = beans;
  }

  /** A resolver for {@code @name} references to the beans of {@code beanFactory}. */
  static BeanResolver beansOf(BeanFactory beanFactory) {
    return new BeanFactoryResolver(beanFactory);
  }

  @Override
  public TypedValue getRootObject() {
    return TypedValue.NULL;
  }

  @Override
  public List<PropertyAccessor> getPropertyAccessors() {
    return PROPERTY_ACCESSORS;
  }

  @Override
  public List<ConstructorResolver> getConstructorResolvers() {
    return List.of();
  }

  @Override
  public List<MethodResolver> getMethodResolvers() {
    return METHOD_RESOLVERS;
  }

  @Override
  public BeanResolver getBeanResolver() {
    return beans;
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
  void setLazyVariable(String name, java.util.function.Supplier<?> value) {
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
  private record Lazy(java.util.function.Supplier<?> value) {}

  @Override
  public boolean isAssignmentEnabled() {
    return false;
  }
}

package dev.ratelimit.spring;

import dev.ratelimit.annotation.RateLimited;
import java.lang.reflect.Method;
import java.util.LinkedHashSet;
import java.util.Set;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * For a native image: a bean with {@code @RateLimited} on a method or on its type (or on a
 * superclass or an interface of it) keeps its methods, their annotations and their parameter
 * names reflectively readable, since {@link RateLimitedMethods} and the advisor find them by
 * reflection at run time ({@code getMethods}, the annotations, {@code -parameters} names).
 * Listed in {@code META-INF/spring/aot.factories}.
 */
final class RateLimitedBeanAotProcessor implements BeanRegistrationAotProcessor {

  @Override
  public BeanRegistrationAotContribution processAheadOfTime(RegisteredBean bean) {
    Class<?> type = ClassUtils.getUserClass(bean.getBeanClass());
    Set<Class<?>> annotated = annotatedTypes(type);
    if (annotated.isEmpty()) {
      return null;
    }
    return (generation, code) -> {
      ReflectionHints reflection = generation.getRuntimeHints().reflection();
      for (Class<?> t : annotated) {
        reflection.registerType(t, MemberCategory.INVOKE_PUBLIC_METHODS, MemberCategory.INVOKE_DECLARED_METHODS);
      }
    };
  }

  /**
   * {@code type} and its superclasses and interfaces (not the JDK's), when one of them has
   * {@code @RateLimited} on a method or on itself; else none.
   */
  static Set<Class<?>> annotatedTypes(Class<?> type) {
    Set<Class<?>> hierarchy = new LinkedHashSet<>();
    for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
      hierarchy.add(c);
      hierarchy.addAll(ClassUtils.getAllInterfacesForClassAsSet(c));
    }
    hierarchy.removeIf(c -> c.getName().startsWith("java.")); // the JDK's own carry no @RateLimited
    for (Class<?> c : hierarchy) {
      if (!AnnotatedElementUtils.findMergedRepeatableAnnotations(c, RateLimited.class).isEmpty()) {
        return hierarchy;
      }
      for (Method m : ReflectionUtils.getDeclaredMethods(c)) {
        if (!AnnotatedElementUtils.findMergedRepeatableAnnotations(m, RateLimited.class).isEmpty()) {
          return hierarchy;
        }
      }
    }
    return Set.of();
  }
}

package dev.ratelimit.spring;

import java.lang.reflect.Method;
import org.aopalliance.aop.Advice;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.ObjectProvider;

/**
 * Puts {@link RateLimitAspect} on the methods {@link RateLimitedMethods#annotations} finds limited:
 * the lookup start-up validates with, so what is validated is exactly what applies, annotations on
 * an interface or an overridden method included (an AspectJ {@code @annotation} pointcut reads only
 * the class's own method, and left those unlimited). Static: decided once per method and class.
 *
 * <p>The aspect is looked up on the first limited call, not when proxies are made (the proxy creator
 * asks for the advice then): made early, it would take the limiter, the backend and the policies
 * with it before the application's own beans, and a limited bean they depend on could not be made.
 */
final class RateLimitAdvisor extends AbstractPointcutAdvisor {
  private final ObjectProvider<RateLimitAspect> aspect;
  private final Pointcut pointcut = new StaticMethodMatcherPointcut() {
    @Override
    public boolean matches(Method method, Class<?> targetClass) {
      return !RateLimitedMethods.annotations(AopUtils.getMostSpecificMethod(method, targetClass)).isEmpty();
    }
  };

  RateLimitAdvisor(ObjectProvider<RateLimitAspect> aspect, int order) {
    this.aspect = aspect;
    setOrder(order);
  }

  @Override
  public Pointcut getPointcut() {
    return pointcut;
  }

  /** The aspect, found on the first limited call: proxies are made before it, and without it. */
  private final MethodInterceptor advice = new MethodInterceptor() {
    private volatile RateLimitAspect found;

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
      RateLimitAspect a = found;
      if (a == null) {
        a = aspect.getObject();
        found = a;
      }
      return a.invoke(invocation);
    }
  };

  @Override
  public Advice getAdvice() {
    return advice;
  }
}

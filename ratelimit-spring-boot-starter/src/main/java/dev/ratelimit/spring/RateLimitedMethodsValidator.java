package dev.ratelimit.spring;

import java.util.ArrayList;
import java.util.List;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;

/**
 * Parses every bean's {@code @RateLimited} methods at start-up, so that a bad expression or an
 * unknown policy fails the application context. Classes seen before the singletons are all created
 * are parsed then (the parser depends on the policies, themselves beans); later ones at once.
 */
final class RateLimitedMethodsValidator implements BeanPostProcessor, SmartInitializingSingleton {
  private final ObjectProvider<RateLimitedMethods> methods;
  private final List<Class<?>> pending = new ArrayList<>();
  private volatile boolean started;

  RateLimitedMethodsValidator(ObjectProvider<RateLimitedMethods> methods) {
    this.methods = methods;
  }

  @Override
  public Object postProcessBeforeInitialization(Object bean, String beanName) {
    Class<?> type = AopUtils.getTargetClass(bean);
    if (started) {
      methods.getObject().inspect(type);
    } else {
      synchronized (pending) {
        pending.add(type);
      }
    }
    return bean;
  }

  @Override
  public void afterSingletonsInstantiated() {
    RateLimitedMethods parser = methods.getObject();
    synchronized (pending) {
      for (Class<?> type : pending) {
        parser.inspect(type);
      }
      pending.clear();
    }
    started = true;
  }
}

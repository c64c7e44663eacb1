package dev.ratelimit.spring;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.TypeReference;
import org.springframework.boot.context.properties.bind.BindableRuntimeHintsRegistrar;
import org.springframework.util.ClassUtils;

/**
 * What a native image (GraalVM) must keep for the starter, which no code path shows the image
 * builder: registered through {@code META-INF/spring/aot.factories}, so that Spring's AOT step
 * writes it into the image's reachability metadata.
 * <ul>
 *   <li>the Redis backend's Lua scripts, read as class-path resources;</li>
 *   <li>what the expressions read reflectively at run time: whether a number prints a text of its own ({@code getMethod("toString")}, for keys), and the members of
 *       the values the starter gives {@code @RateLimited} expressions, which the sandbox reads
 *       through getters and calls ({@code #p0.toLowerCase()}, {@code #request.remoteAddr});</li>
 *   <li>the binding of {@link RateLimitProperties} and every type nested in it.</li>
 * </ul>
 * An application's own types that its expressions read ({@code #order.customerId}) are the
 * application's to register, as for any SpEL it runs: {@code @RegisterReflectionForBinding}.
 */
final class RateLimitRuntimeHints implements RuntimeHintsRegistrar {
  /** Every Lua script of ratelimit-redis: the checks and the functions they share. */
  static final String LUA_SCRIPTS = "dev/ratelimit/redis/*.lua";

  /** Numbers the JDK makes: keys, through {@code Values}'s look-up of their own {@code toString}. */
  static final List<Class<?>> NUMBERS = List.of(Byte.class, Short.class, Integer.class, Long.class, Float.class,
      Double.class, BigInteger.class, BigDecimal.class, AtomicInteger.class, AtomicLong.class, LongAdder.class,
      DoubleAdder.class);

  /** Values of {@code @RateLimited} expressions' variables, and what keys are made of. */
  static final List<Class<?>> EXPRESSION_VALUES = List.of(String.class, Boolean.class, Character.class, UUID.class);

  /** The request of {@code #request}, as the servlet API and the embedded servers (Tomcat, Jetty) give it. */
  static final List<String> REQUESTS = List.of("jakarta.servlet.ServletRequest",
      "jakarta.servlet.http.HttpServletRequest", "jakarta.servlet.http.Cookie", "java.security.Principal",
      "org.apache.catalina.connector.RequestFacade", "org.eclipse.jetty.ee10.servlet.ServletApiRequest");

  /** The Redis backend; its scripts are registered only when it is on the class path. */
  static final String REDIS_BACKEND = "dev.ratelimit.redis.RedisBackend";

  @Override
  public void registerHints(RuntimeHints hints, ClassLoader classLoader) {
    if (ClassUtils.isPresent(REDIS_BACKEND, classLoader)) {
      hints.resources().registerPattern(LUA_SCRIPTS);
      hints.reflection().registerType(TypeReference.of(REDIS_BACKEND));
    }
    for (Class<?> type : NUMBERS) {
      hints.reflection().registerType(type, MemberCategory.INVOKE_PUBLIC_METHODS);
    }
    for (Class<?> type : EXPRESSION_VALUES) {
      hints.reflection().registerType(type, MemberCategory.INVOKE_PUBLIC_METHODS);
    }
    for (String type : REQUESTS) {
      if (ClassUtils.isPresent(type, classLoader)) {
        hints.reflection().registerType(TypeReference.of(type), MemberCategory.INVOKE_PUBLIC_METHODS);
      }
    }
    BindableRuntimeHintsRegistrar.forTypes(RateLimitProperties.class).registerHints(hints, classLoader);
  }
}

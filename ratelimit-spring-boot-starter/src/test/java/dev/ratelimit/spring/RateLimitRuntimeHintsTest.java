package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.redis.RedisBackend;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.ReflectionHintsPredicates;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.core.io.support.SpringFactoriesLoader;

/**
 * The native-image hints, as Spring's AOT step finds them (through {@code META-INF/spring/aot.factories})
 * and as the image needs them: each is proved by a {@link RuntimeHintsPredicates} predicate.
 */
class RateLimitRuntimeHintsTest {
  private static final ReflectionHintsPredicates REFLECTION = RuntimeHintsPredicates.reflection();

  /** The hints of every registrar aot.factories names, as the AOT step applies them. */
  private static RuntimeHints hints(ClassLoader classLoader) {
    RuntimeHints hints = new RuntimeHints();
    List<RuntimeHintsRegistrar> registrars = SpringFactoriesLoader
        .forResourceLocation("META-INF/spring/aot.factories", RateLimitRuntimeHintsTest.class.getClassLoader())
        .load(RuntimeHintsRegistrar.class);
    assertThat(registrars).as("aot.factories names the starter's registrar")
        .anySatisfy(r -> assertThat(r).isInstanceOf(RateLimitRuntimeHints.class));
    registrars.forEach(r -> r.registerHints(hints, classLoader));
    return hints;
  }

  private static RuntimeHints hints() {
    return hints(RateLimitRuntimeHintsTest.class.getClassLoader());
  }

  @Test
  void everyLuaScriptOfTheRedisBackendIsAResourceOfTheImage() throws IOException {
    Resource[] scripts = new PathMatchingResourcePatternResolver().getResources("classpath*:dev/ratelimit/redis/*.lua");
    List<String> names = new ArrayList<>();
    for (Resource script : scripts) {
      names.add(script.getFilename());
    }
    assertThat(names).contains("check.lua", "check_all.lua", "prelude.lua", "gcra.lua", "fixed_window.lua",
        "sliding_log.lua", "sliding_window.lua", "token_bucket.lua");
    RuntimeHints hints = hints();
    for (String name : names) {
      assertThat(RuntimeHintsPredicates.resource().forResource("dev/ratelimit/redis/" + name)).as(name)
          .accepts(hints);
    }
    assertThat(REFLECTION.onType(RedisBackend.class)).accepts(hints);
  }

  @Test
  void withoutTheRedisBackendNoScriptIsRegistered() {
    RuntimeHints hints = hints(new FilteredClassLoader(RedisBackend.class));
    assertThat(RuntimeHintsPredicates.resource().forResource("dev/ratelimit/redis/check.lua")).rejects(hints);
  }

  @Test
  void whatExpressionsReadReflectivelyIsKept() throws NoSuchMethodException {
    RuntimeHints hints = hints();
    // a number is a key when it prints a text of its own: Values looks its toString up
    for (Class<?> number : RateLimitRuntimeHints.NUMBERS) {
      assertThat(REFLECTION.onMethodInvocation(number.getMethod("toString"))).as(number.getName()).accepts(hints);
    }
    assertThat(REFLECTION.onMethodInvocation(BigDecimal.class, "toPlainString")).accepts(hints);
    // what @RateLimited expressions call on the values the starter gives them
    assertThat(REFLECTION.onMethodInvocation(String.class.getMethod("toLowerCase"))).accepts(hints);
    assertThat(REFLECTION.onMethodInvocation(String.class.getMethod("substring", int.class))).accepts(hints);
    assertThat(REFLECTION.onMethodInvocation(UUID.class.getMethod("toString"))).accepts(hints);
    assertThat(REFLECTION.onMethodInvocation(HttpServletRequest.class, "getRemoteUser")).accepts(hints);
    assertThat(REFLECTION.onMethodInvocation(Cookie.class, "getValue")).accepts(hints);
    assertThat(REFLECTION.onMethodInvocation(org.apache.catalina.connector.RequestFacade.class, "getRemoteAddr"))
        .as("the request Boot's Tomcat gives, whose getters the sandbox finds on its class").accepts(hints);
  }

  @Test
  void everyPropertiesTypeCanBeBound() throws NoSuchMethodException {
    RuntimeHints hints = hints();
    List<Class<?>> types = new ArrayList<>(List.of(RateLimitProperties.class, FilterProperties.class));
    for (Class<?> nested : List.of(RateLimitProperties.class.getDeclaredClasses(),
        FilterProperties.class.getDeclaredClasses()).stream().flatMap(java.util.Arrays::stream).toList()) {
      if (!nested.isEnum()) {
        types.add(nested);
      }
    }
    assertThat(types).contains(RateLimitProperties.PolicyProperties.class, FilterProperties.Rule.class,
        RateLimitProperties.Denied.class, RateLimitProperties.CircuitBreaker.class);
    for (Class<?> type : types) {
      Predicate<RuntimeHints> constructor = REFLECTION.onConstructorInvocation(type.getDeclaredConstructor());
      assertThat(constructor).as(type.getName()).accepts(hints);
    }
    assertThat(REFLECTION.onMethodInvocation(RateLimitProperties.PolicyProperties.class, "setWindow")).accepts(hints);
    assertThat(REFLECTION.onMethodInvocation(RateLimitProperties.PolicyProperties.class, "getWindow")).accepts(hints);
    assertThat(REFLECTION.onMethodInvocation(FilterProperties.Rule.class, "setKey")).accepts(hints);
    assertThat(REFLECTION.onMethodInvocation(RateLimitProperties.Denied.class, "setHeaders")).accepts(hints);
    assertThat(REFLECTION.onMethodInvocation(RateLimitProperties.CircuitBreaker.class, "setCoolDown")).accepts(hints);
    assertThat(REFLECTION.onMethodInvocation(RateLimitProperties.class, "setPolicies")).accepts(hints);
  }
}

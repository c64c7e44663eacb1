package dev.ratelimit.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.ReflectionHintsPredicates;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.core.io.support.SpringFactoriesLoader;

/**
 * The gateway's native-image hints, as Spring's AOT step finds them (through {@code
 * META-INF/spring/aot.factories}): each is proved by a {@link RuntimeHintsPredicates} predicate.
 */
class GatewayRuntimeHintsTest {
  private static final ReflectionHintsPredicates REFLECTION = RuntimeHintsPredicates.reflection();

  /** The hints of every registrar the class path's aot.factories name, as the AOT step applies them. */
  private static RuntimeHints hints(ClassLoader classLoader) {
    List<RuntimeHintsRegistrar> registrars = SpringFactoriesLoader
        .forResourceLocation("META-INF/spring/aot.factories", GatewayRuntimeHintsTest.class.getClassLoader())
        .load(RuntimeHintsRegistrar.class);
    assertThat(registrars).as("aot.factories names the gateway's registrar, and the starter's is there too")
        .anySatisfy(r -> assertThat(r).isInstanceOf(GatewayRuntimeHints.class))
        .anySatisfy(r -> assertThat(r.getClass().getName()).isEqualTo("dev.ratelimit.spring.RateLimitRuntimeHints"));
    RuntimeHints hints = new RuntimeHints();
    registrars.forEach(r -> r.registerHints(hints, classLoader));
    return hints;
  }

  @Test
  void aRoutesArgumentsCanBeBoundToTheLimitersConfig() throws NoSuchMethodException {
    RuntimeHints hints = hints(GatewayRuntimeHintsTest.class.getClassLoader());
    // the gateway makes a route's Config with its no-argument constructor, then binds the route's args
    assertThat(REFLECTION.onConstructorInvocation(PolicyRateLimiter.Config.class.getDeclaredConstructor()))
        .accepts(hints);
    assertThat(REFLECTION.onMethodInvocation(PolicyRateLimiter.Config.class, "setPolicies")).accepts(hints);
    assertThat(REFLECTION.onMethodInvocation(PolicyRateLimiter.Config.class, "getPolicies")).accepts(hints);
    // and the starter's, which the gateway's limiter runs on: its Lua scripts, for one
    assertThat(RuntimeHintsPredicates.resource().forResource("dev/ratelimit/redis/check_all.lua")).accepts(hints);
  }

  @Test
  void withoutTheGatewayNothingOfItsIsRegistered() {
    ClassLoader parent = GatewayRuntimeHintsTest.class.getClassLoader();
    ClassLoader withoutGateway = new ClassLoader(parent) {
      @Override
      protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (name.startsWith("org.springframework.cloud.gateway.")) {
          throw new ClassNotFoundException(name);
        }
        return super.loadClass(name, resolve);
      }
    };
    RuntimeHints hints = hints(withoutGateway);
    assertThat(REFLECTION.onMethodInvocation(PolicyRateLimiter.Config.class, "setPolicies")).rejects(hints);
  }
}

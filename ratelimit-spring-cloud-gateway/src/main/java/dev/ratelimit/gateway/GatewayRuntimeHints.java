package dev.ratelimit.gateway;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.boot.context.properties.bind.BindableRuntimeHintsRegistrar;
import org.springframework.util.ClassUtils;

/**
 * What a native image (GraalVM) must keep for the gateway's {@link PolicyRateLimiter}, registered
 * through {@code META-INF/spring/aot.factories} as the starter's hints are: the binding of a
 * route's arguments ({@code args.ratelimit.policies}) to {@link PolicyRateLimiter.Config}, which
 * the gateway makes reflectively (its constructor) and binds through its getters and setters.
 * Spring Cloud Gateway registers the configuration classes of its own filters and limiters only,
 * those in its own packages. The Lua scripts, the expressions' reflection and {@code
 * ratelimit.*} are the starter's hints.
 */
final class GatewayRuntimeHints implements RuntimeHintsRegistrar {
  /** The gateway's limiter base class: without it there is no route to bind, as for the auto-configuration. */
  static final String GATEWAY_RATE_LIMITER = "org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter";

  @Override
  public void registerHints(RuntimeHints hints, ClassLoader classLoader) {
    if (ClassUtils.isPresent(GATEWAY_RATE_LIMITER, classLoader)) {
      BindableRuntimeHintsRegistrar.forTypes(PolicyRateLimiter.Config.class).registerHints(hints, classLoader);
    }
  }
}

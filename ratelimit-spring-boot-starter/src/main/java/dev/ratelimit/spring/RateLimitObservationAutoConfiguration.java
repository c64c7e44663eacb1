package dev.ratelimit.spring;

import dev.ratelimit.RateLimiter;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * An Observation around each check of the auto-configured limiter ({@link RateLimitObservation}),
 * when Micrometer's observation API is on the class path and the application has an
 * {@link ObservationRegistry} with a handler (Boot's actuator makes one). Without, nothing of it runs. Boot's
 * {@code management.observations.enable.ratelimit=false} turns the observations off.
 */
@AutoConfiguration(afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass(ObservationRegistry.class)
@ConditionalOnBean(ObservationRegistry.class)
@ConditionalOnProperty(prefix = "ratelimit", name = "enabled", havingValue = "true", matchIfMissing = true)
public class RateLimitObservationAutoConfiguration {

  /**
   * Observes the limiter the starter builds (a limiter bean of your own: {@link
   * RateLimitObservation#observe}). A registry that is a no-op when the limiter is built (no
   * handler) changes nothing: no listener, no wrapper, so a check costs what it did without it.
   */
  @Bean
  @ConditionalOnMissingBean(name = "rateLimitObservation")
  LimiterDecorator rateLimitObservation(ObjectProvider<ObservationRegistry> registry) {
    return new LimiterDecorator() {
      @Override
      public void configure(RateLimiter.Builder builder) {
        if (!registry.getObject().isNoop()) {
          builder.listener(RateLimitObservation.outcomes()); // how each decision was made
        }
      }

      @Override
      public RateLimiter decorate(RateLimiter limiter) {
        ObservationRegistry observations = registry.getObject();
        return observations.isNoop() ? limiter : RateLimitObservation.observe(limiter, observations);
      }
    };
  }
}

package dev.ratelimit.spring;

import dev.ratelimit.FailureMode;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.spi.Backend;
import java.time.InstantSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The {@code ratelimit} health contributor ({@link RateLimitHealthIndicator}), when Boot's health
 * support is on the class path; off with {@code management.health.ratelimit.enabled=false}.
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnClass({HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class})
@ConditionalOnBean(Backend.class)
public class RateLimitHealthAutoConfiguration {

  /** Probes the limiter's backend; DOWN when it fails only under FAIL_CLOSED (see the indicator). */
  @Bean(name = "ratelimitHealthIndicator")
  @ConditionalOnMissingBean(name = "ratelimitHealthIndicator")
  @ConditionalOnEnabledHealthIndicator("ratelimit")
  public RateLimitHealthIndicator ratelimitHealthIndicator(Backend backend, ObjectProvider<InstantSource> clock,
      ObjectProvider<RateLimiter> limiter) {
    // the limiter's own failure mode: the application's limiter may have been built with another
    RateLimiter unique = limiter.getIfUnique();
    return new RateLimitHealthIndicator(backend, clock.getIfAvailable(InstantSource::system),
        unique == null ? FailureMode.FAIL_CLOSED : unique.failureMode());
  }
}

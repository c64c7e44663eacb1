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
 * support is on the class path; off with {@code management.health.ratelimit.enabled=false}. The
 * probe's error is among its details only with {@code ratelimit.health.show-sensitive-details=true}.
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
      ObjectProvider<RateLimiter> limiter, ObjectProvider<RateLimitProperties> properties) {
    // the limiter's own failure mode and circuit: the application's limiter may have been built otherwise
    RateLimiter unique = limiter.getIfUnique();
    InstantSource source = clock.getIfAvailable(InstantSource::system);
    if (unique == null) {
      return new RateLimitHealthIndicator(backend, source, FailureMode.FAIL_CLOSED);
    }
    RateLimitProperties p = properties.getIfAvailable();
    return new RateLimitHealthIndicator(backend, source, unique, p != null && p.getHealth().isShowSensitiveDetails());
  }
}

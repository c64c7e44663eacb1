package dev.ratelimit.spring;

import dev.ratelimit.RateLimiter;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@code ratelimits} Actuator endpoint, when Actuator is on the class path and the endpoint is
 * available (exposed, and its access not {@code none}).
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnClass({Endpoint.class, ConditionalOnAvailableEndpoint.class})
@ConditionalOnBean({RateLimiter.class, PolicyRegistry.class})
public class RateLimitEndpointAutoConfiguration {

  /** The endpoint over the limiter and the configured policies. */
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnAvailableEndpoint
  public RateLimitsEndpoint rateLimitsEndpoint(RateLimiter limiter, PolicyRegistry policies) {
    return new RateLimitsEndpoint(limiter, policies);
  }
}

package dev.ratelimit.gateway;

import dev.ratelimit.RateLimiter;
import dev.ratelimit.http.HeaderOptions;
import dev.ratelimit.spring.PolicyRegistry;
import dev.ratelimit.spring.RateLimitAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.cloud.gateway.support.ConfigurationService;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;

/**
 * The gateway's {@link PolicyRateLimiter}, primary: the {@code RequestRateLimiter} filter uses it
 * unless a route names another ({@code args.rate-limiter: "#{@redisRateLimiter}"}).
 */
// before the gateway's: its RequestRateLimiter filter factory is made only when a RateLimiter bean exists
@AutoConfiguration(after = RateLimitAutoConfiguration.class,
    beforeName = "org.springframework.cloud.gateway.config.GatewayAutoConfiguration")
@ConditionalOnClass(name = "org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter")
@ConditionalOnBean(RateLimiter.class)
public class RateLimitGatewayAutoConfiguration {
  /** The limiter of gateway routes, on the starter's limiter and named policies. */
  @Bean
  @Primary
  @ConditionalOnMissingBean(PolicyRateLimiter.class)
  public PolicyRateLimiter policyRateLimiter(RateLimiter limiter, PolicyRegistry policies, HeaderOptions headers,
      ConfigurationService configurationService) {
    return new PolicyRateLimiter(limiter, policies, headers, configurationService);
  }
}

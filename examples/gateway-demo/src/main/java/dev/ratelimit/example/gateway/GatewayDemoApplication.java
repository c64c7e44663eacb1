package dev.ratelimit.example.gateway;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.annotation.Bean;
import reactor.core.publisher.Mono;

/**
 * A Spring Cloud Gateway with one route, {@code GET /work?user=N} to {@code demo.backend-url},
 * limited per user by the policy {@code work} of this limiter ({@code PolicyRateLimiter}), or with
 * the profile {@code redis-rate-limiter} by the gateway's own {@code RedisRateLimiter} at the same
 * rate: the peer of the reactive benchmark.
 */
@SpringBootApplication
public class GatewayDemoApplication {
  public static void main(String[] args) {
    SpringApplication.run(GatewayDemoApplication.class, args);
  }

  /** The user of a request: its {@code user} query parameter. */
  @Bean
  KeyResolver userKeyResolver() {
    return exchange -> Mono.justOrEmpty(exchange.getRequest().getQueryParams().getFirst("user"));
  }
}

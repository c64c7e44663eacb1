package dev.ratelimit.gateway;

import dev.ratelimit.ManualClock;
import java.time.Instant;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.context.annotation.Bean;
import reactor.core.publisher.Mono;

/** A gateway whose routes are configured by properties; clients are told apart by {@code X-Client}. */
@SpringBootConfiguration
@EnableAutoConfiguration
public class GatewayApp {
  /** The limiter's clock (the starter uses an InstantSource bean): tests move it. */
  @Bean
  ManualClock clock() {
    return ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
  }

  @Bean
  KeyResolver clientKeyResolver() {
    return exchange -> Mono.justOrEmpty(exchange.getRequest().getHeaders().getFirst("X-Client"));
  }
}

package dev.ratelimit.service;

import dev.ratelimit.spi.Backend;
import dev.ratelimit.spring.RateLimitProperties;
import java.time.InstantSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The reservation tokens of {@code /v1/reserve}, and the record of those settled. */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(ReservationProperties.class)
class ReservationConfiguration {
  private static final Logger log = LoggerFactory.getLogger(ReservationConfiguration.class);

  @Bean
  ReservationTokens reservationTokens(ReservationProperties properties, Backend backend,
      ObjectProvider<InstantSource> clock) {
    if (properties.secret() == null && backend.isRemote()) {
      log.warn("ratelimit-service.reservations.secret is unset: this instance signs reservation tokens with a random"
          + " key of its own, so another instance refuses them; set the same secret on every instance"
          + " (RATELIMIT_SERVICE_RESERVATIONS_SECRET, 32 characters or more) to settle a token on any of them");
    }
    return new ReservationTokens(ReservationTokens.secretBytes(properties.secret()), properties.ttl(),
        clock.getIfAvailable(InstantSource::system));
  }

  @Bean
  SettledTokens settledTokens(ReservationProperties properties, Backend backend, ObjectProvider<InstantSource> clock,
      RateLimitProperties limiter) {
    return new SettledTokens(backend, properties.ttl(), clock.getIfAvailable(InstantSource::system),
        limiter.getTimeout());
  }
}

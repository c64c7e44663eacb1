package dev.ratelimit.service;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The reservation tokens of {@code /v1/reserve}, under {@code ratelimit-service.reservations}.
 *
 * @param secret the HMAC-SHA256 key that signs tokens, at least {@value #MIN_SECRET_LENGTH}
 *     characters, the same on every instance so that any of them settles a token another issued
 *     (e.g. from {@code RATELIMIT_SERVICE_RESERVATIONS_SECRET}); unset, each instance signs with a
 *     random key of its own, and accepts only its own tokens
 * @param ttl how long a token can be settled (default 15m, from 1s to 1d); after it, the
 *     reservation stays charged at its estimate
 */
@ConfigurationProperties("ratelimit-service.reservations")
public record ReservationProperties(String secret, Duration ttl) {
  static final int MIN_SECRET_LENGTH = 32;
  static final Duration DEFAULT_TTL = Duration.ofMinutes(15);

  /** Applies the default and refuses values that could never work, naming the property. */
  public ReservationProperties {
    if (secret != null && (secret.isBlank() || secret.length() < MIN_SECRET_LENGTH)) {
      // the secret itself is never part of a message
      throw new IllegalArgumentException("ratelimit-service.reservations.secret (RATELIMIT_SERVICE_RESERVATIONS_SECRET)"
          + " is " + (secret.isBlank() ? "blank" : "only " + secret.length() + " characters long") + ": set a random"
          + " secret of at least " + MIN_SECRET_LENGTH + " characters, the same on every instance (e.g. openssl rand"
          + " -hex 32), or leave it unset to have each instance accept only the tokens it issued");
    }
    if (ttl == null) {
      ttl = DEFAULT_TTL;
    }
    if (ttl.compareTo(Duration.ofSeconds(1)) < 0 || ttl.compareTo(Duration.ofDays(1)) > 0) {
      throw new IllegalArgumentException("ratelimit-service.reservations.ttl must be from 1s to 1d, got " + ttl
          + " (e.g. 15m: the longest the work between a reserve and its commit may take)");
    }
  }

  /** The settings, the secret masked. */
  @Override
  public String toString() {
    return "ReservationProperties[secret=" + (secret == null ? "unset" : "******") + ", ttl=" + ttl + "]";
  }
}

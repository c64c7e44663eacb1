package dev.ratelimit.service;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The service's own settings, under {@code ratelimit-service}.
 *
 * @param maxBodyBytes the largest request body accepted, in bytes (default 16384); larger bodies
 *     get 400 before any JSON is read
 * @param requestReadTimeout the longest time to receive a whole request, request line, headers and
 *     body, counted from its first byte (default 10s); a request still arriving then is answered
 *     {@code 408} and its connection closed
 * @param adminToken the bearer token that state-changing operations (reset) require, at least
 *     {@value #MIN_ADMIN_TOKEN_LENGTH} characters, e.g. from {@code RATELIMIT_SERVICE_ADMIN_TOKEN};
 *     unset (the default), they are refused
 */
@ConfigurationProperties("ratelimit-service")
public record ServiceProperties(Integer maxBodyBytes, Duration requestReadTimeout, String adminToken) {
  static final int DEFAULT_MAX_BODY_BYTES = 16 * 1024;
  static final Duration DEFAULT_REQUEST_READ_TIMEOUT = Duration.ofSeconds(10);
  static final int MIN_ADMIN_TOKEN_LENGTH = 16;

  /** Applies the defaults and refuses values that could never work, naming the property. */
  public ServiceProperties {
    if (maxBodyBytes == null) {
      maxBodyBytes = DEFAULT_MAX_BODY_BYTES;
    }
    if (maxBodyBytes < 1) {
      throw new IllegalArgumentException("ratelimit-service.max-body-bytes must be at least 1, got " + maxBodyBytes);
    }
    if (requestReadTimeout == null) {
      requestReadTimeout = DEFAULT_REQUEST_READ_TIMEOUT;
    }
    if (requestReadTimeout.toMillis() < 1) {
      throw new IllegalArgumentException("ratelimit-service.request-read-timeout must be at least 1ms, got "
          + requestReadTimeout + " (e.g. 10s)");
    }
    if (adminToken != null && (adminToken.isBlank() || adminToken.length() < MIN_ADMIN_TOKEN_LENGTH)) {
      // the token itself is never part of a message
      throw new IllegalArgumentException("ratelimit-service.admin-token (RATELIMIT_SERVICE_ADMIN_TOKEN) is "
          + (adminToken.isBlank() ? "blank" : "only " + adminToken.length() + " characters long")
          + ": set a random secret of at least " + MIN_ADMIN_TOKEN_LENGTH + " characters (e.g. openssl rand -hex 32),"
          + " or leave it unset to refuse every state-changing operation");
    }
  }

  /** The settings, the admin token masked. */
  @Override
  public String toString() {
    return "ServiceProperties[maxBodyBytes=" + maxBodyBytes + ", requestReadTimeout=" + requestReadTimeout
        + ", adminToken=" + (adminToken == null ? "unset" : "******") + "]";
  }
}

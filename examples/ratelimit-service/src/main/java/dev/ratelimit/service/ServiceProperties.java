package dev.ratelimit.service;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The service's own settings, under {@code ratelimit-service}.
 *
 * @param maxBodyBytes the largest request body accepted, in bytes (default 16384); larger bodies
 *     get 400 before any JSON is read
 */
@ConfigurationProperties("ratelimit-service")
public record ServiceProperties(Integer maxBodyBytes) {
  static final int DEFAULT_MAX_BODY_BYTES = 16 * 1024;

  /** Applies the default and refuses a size below one byte, naming the property. */
  public ServiceProperties {
    if (maxBodyBytes == null) {
      maxBodyBytes = DEFAULT_MAX_BODY_BYTES;
    }
    if (maxBodyBytes < 1) {
      throw new IllegalArgumentException("ratelimit-service.max-body-bytes must be at least 1, got " + maxBodyBytes);
    }
  }
}

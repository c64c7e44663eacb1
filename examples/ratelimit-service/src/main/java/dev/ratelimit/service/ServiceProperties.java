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
 */
@ConfigurationProperties("ratelimit-service")
public record ServiceProperties(Integer maxBodyBytes, Duration requestReadTimeout) {
  static final int DEFAULT_MAX_BODY_BYTES = 16 * 1024;
  static final Duration DEFAULT_REQUEST_READ_TIMEOUT = Duration.ofSeconds(10);

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
  }
}

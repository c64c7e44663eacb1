package dev.ratelimit.service.envoy;

import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The Envoy rate limit endpoint's settings, under {@code ratelimit-service.grpc}.
 *
 * @param enabled whether to serve Envoy's rate limit protocol ({@code envoy.service.ratelimit.v3},
 *     gRPC) and gRPC health checking; default false
 * @param port the gRPC port, default {@value #DEFAULT_PORT}; 0 picks a free one (tests)
 * @param config the rate limit configuration files, in envoyproxy/ratelimit's YAML format, one
 *     domain each, as Spring resource locations ({@code file:/etc/ratelimit/config.yaml},
 *     {@code classpath:...}); a location may name several files ({@code file:/etc/ratelimit/*.yaml})
 * @param responseHeaders whether answers carry the limit headers ({@code RateLimit},
 *     {@code RateLimit-Policy}, and {@code Retry-After} when over the limit) in
 *     {@code response_headers_to_add}, for Envoy to add to the client's response; default false
 */
@ConfigurationProperties("ratelimit-service.grpc")
public record EnvoyProperties(Boolean enabled, Integer port, List<String> config, Boolean responseHeaders) {
  static final int DEFAULT_PORT = 8081;

  /** Applies the defaults and refuses values that could never work, naming the property. */
  public EnvoyProperties {
    enabled = enabled != null && enabled;
    port = port == null ? DEFAULT_PORT : port;
    if (port < 0 || port > 65_535) {
      throw new IllegalArgumentException("ratelimit-service.grpc.port must be a TCP port (0 for any free one), got "
          + port);
    }
    config = config == null ? List.of() : List.copyOf(config);
    responseHeaders = responseHeaders != null && responseHeaders;
  }
}

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
 * @param address the address the gRPC port listens on; default every interface ({@code 0.0.0.0}),
 *     as Envoy usually runs on another host; {@code 127.0.0.1} for a sidecar on the same one
 * @param maxDescriptors the most descriptors one request may carry, default {@value
 *     #DEFAULT_MAX_DESCRIPTORS}; beyond it the request is refused with {@code INVALID_ARGUMENT}
 * @param maxEntries the most entries one descriptor may carry, default {@value
 *     #DEFAULT_MAX_ENTRIES}; beyond it the request is refused with {@code INVALID_ARGUMENT}
 */
@ConfigurationProperties("ratelimit-service.grpc")
public record EnvoyProperties(Boolean enabled, Integer port, List<String> config, Boolean responseHeaders,
    String address, Integer maxDescriptors, Integer maxEntries) {
  static final int DEFAULT_PORT = 8081;
  static final int DEFAULT_MAX_DESCRIPTORS = 64;
  static final int DEFAULT_MAX_ENTRIES = 32;
  /** The largest bound either may be set to: one request's work stays small. */
  static final int MAX_BOUND = 10_000;

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
    address = address == null || address.isBlank() ? "0.0.0.0" : address.strip();
    maxDescriptors = bound(maxDescriptors, DEFAULT_MAX_DESCRIPTORS, "max-descriptors");
    maxEntries = bound(maxEntries, DEFAULT_MAX_ENTRIES, "max-entries");
  }

  private static int bound(Integer value, int fallback, String name) {
    int v = value == null ? fallback : value;
    if (v < 1 || v > MAX_BOUND) {
      throw new IllegalArgumentException("ratelimit-service.grpc." + name + " must be from 1 to " + MAX_BOUND
          + ", got " + v);
    }
    return v;
  }
}

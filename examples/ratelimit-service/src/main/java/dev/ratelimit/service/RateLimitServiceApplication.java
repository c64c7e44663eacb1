package dev.ratelimit.service;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;

/**
 * The HTTP decision service: rate-limit decisions as JSON over HTTP, so that services in any
 * language share one limiter. Policies come from {@code application.yml} ({@code ratelimit.policies.*},
 * overridable with environment variables such as {@code RATELIMIT_POLICIES_API_LIMIT=200}); the
 * in-memory backend by default, Redis when {@code RATELIMIT_REDIS_URL} (or Boot's
 * {@code spring.data.redis.url} or {@code spring.data.redis.host}) is set. See {@code /v1/openapi.yaml} for the API.
 * With {@code ratelimit-service.grpc.enabled}, it also answers Envoy's rate limit protocol over gRPC
 * (package {@code dev.ratelimit.service.envoy}, docs/envoy.md).
 */
@SpringBootApplication
@EnableConfigurationProperties(ServiceProperties.class)
public class RateLimitServiceApplication {

  /** Starts the service (port 8080 unless {@code SERVER_PORT} says otherwise). */
  public static void main(String[] args) {
    SpringApplication.run(RateLimitServiceApplication.class, args);
  }
}

package dev.ratelimit.service.envoy;

import dev.ratelimit.RateLimiter;
import dev.ratelimit.http.HeaderOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

/**
 * The Envoy rate limit endpoint, when {@code ratelimit-service.grpc.enabled} is true: its rules
 * from {@code ratelimit-service.grpc.config}, checked by the service's one limiter (its backend,
 * timeout, failure mode, listeners and metrics), and a gRPC server on {@code
 * ratelimit-service.grpc.port}.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(EnvoyProperties.class)
@ConditionalOnBooleanProperty("ratelimit-service.grpc.enabled")
class EnvoyConfiguration {

  @Bean
  EnvoyConfig envoyRateLimitConfig(EnvoyProperties properties) {
    if (properties.config().isEmpty()) {
      throw new IllegalArgumentException("ratelimit-service.grpc.config (RATELIMIT_SERVICE_GRPC_CONFIG) is empty:"
          + " name the rate limit files, e.g. file:/etc/ratelimit/*.yaml, or leave ratelimit-service.grpc.enabled"
          + " false");
    }
    Map<String, String> files = new LinkedHashMap<>();
    PathMatchingResourcePatternResolver resolver = new PathMatchingResourcePatternResolver();
    for (String location : properties.config()) {
      Resource[] resources;
      try {
        resources = resolver.getResources(location);
      } catch (IOException e) {
        throw new IllegalArgumentException("ratelimit-service.grpc.config: cannot list '" + location + "': "
            + e.getMessage(), e);
      }
      Arrays.sort(resources, Comparator.comparing(Resource::getDescription));
      if (resources.length == 0 || !resources[0].exists()) {
        throw new IllegalArgumentException("ratelimit-service.grpc.config: '" + location + "' names no file: give"
            + " each rate limit file, e.g. file:/etc/ratelimit/config.yaml or file:/etc/ratelimit/*.yaml");
      }
      for (Resource resource : resources) {
        try {
          files.put(resource.getDescription(), resource.getContentAsString(StandardCharsets.UTF_8));
        } catch (IOException e) {
          throw new UncheckedIOException("ratelimit-service.grpc.config: cannot read " + resource.getDescription(), e);
        }
      }
    }
    return EnvoyConfig.parse(files);
  }

  @Bean
  GrpcServer envoyGrpcServer(EnvoyProperties properties, RateLimiter limiter, EnvoyConfig config,
      HeaderOptions headerOptions, ObjectProvider<InstantSource> clock) {
    // the limiter's clock (the application's InstantSource bean, else the system's)
    return new GrpcServer(properties.address(), properties.port(), new RateLimitService(limiter, config, headerOptions,
        properties.responseHeaders(), properties.maxDescriptors(), properties.maxEntries(),
        clock.getIfAvailable(InstantSource::system)));
  }
}

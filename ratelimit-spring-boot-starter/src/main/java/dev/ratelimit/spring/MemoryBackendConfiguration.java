package dev.ratelimit.spring;

import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.spi.Backend;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The in-memory backend, unless Redis was selected or the application has its own backend. */
@Configuration(proxyBeanMethods = false)
class MemoryBackendConfiguration {
  @Bean
  @ConditionalOnMissingBean(Backend.class)
  Backend memoryRateLimitBackend(RateLimitProperties properties) {
    if (properties.getBackend() == RateLimitProperties.BackendType.REDIS) {
      throw new IllegalStateException("ratelimit.backend=redis needs dev.ratelimit:ratelimit-redis and "
          + "org.redisson:redisson on the classpath");
    }
    return InMemoryBackend.builder().maximumKeys(properties.getMemory().getMaximumKeys()).build();
  }
}

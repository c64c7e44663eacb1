package dev.ratelimit.spring;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * Micrometer metrics of the auto-configured limiter, when Micrometer is on the class path and the
 * application has a {@link MeterRegistry}: a {@link RateLimitMetrics} listener, which
 * {@link RateLimitAutoConfiguration} hands to the limiter with every other
 * {@link dev.ratelimit.RateLimitListener} bean.
 */
@AutoConfiguration(afterName = {
    "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"})
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean(MeterRegistry.class)
@ConditionalOnProperty(prefix = "ratelimit", name = "enabled", havingValue = "true", matchIfMissing = true)
public class RateLimitMetricsAutoConfiguration {

  /** The meters, in the application's (primary) registry. */
  @Bean
  @ConditionalOnMissingBean
  public RateLimitMetrics rateLimitMetrics(MeterRegistry registry) {
    return new RateLimitMetrics(registry);
  }

  /** The gauge {@code ratelimit.nearcache.size}: hot denied keys answered locally. */
  @Bean
  @ConditionalOnMissingBean(name = "rateLimitNearCacheGauge")
  public io.micrometer.core.instrument.binder.MeterBinder rateLimitNearCacheGauge(
      org.springframework.beans.factory.ObjectProvider<dev.ratelimit.RateLimiter> limiter) {
    return registry -> io.micrometer.core.instrument.Gauge.builder("ratelimit.nearcache.size", () -> {
      dev.ratelimit.RateLimiter l = limiter.getIfAvailable();
      return l == null ? 0 : l.nearCacheSize();
    }).description("(key, policy) pairs whose denial the near-cache answers locally").register(registry);
  }

  /**
   * The counter {@code ratelimit.reservation.settle.failures}: commits and cancels that could not
   * reach the backend (see {@link dev.ratelimit.RateLimiter#failedSettles()}).
   */
  @Bean
  @ConditionalOnMissingBean(name = "rateLimitSettleFailures")
  public io.micrometer.core.instrument.binder.MeterBinder rateLimitSettleFailures(
      org.springframework.beans.factory.ObjectProvider<dev.ratelimit.RateLimiter> limiter) {
    return registry -> io.micrometer.core.instrument.FunctionCounter.builder(SETTLE_FAILURES, limiter, p -> {
      dev.ratelimit.RateLimiter l = p.getIfAvailable();
      return l == null ? 0 : l.failedSettles();
    }).description("reservation settles that could not reach the backend; their units stayed as they were")
        .register(registry);
  }

  /** The name of the counter of failed settles. */
  public static final String SETTLE_FAILURES = "ratelimit.reservation.settle.failures";

  /**
   * The counter {@code ratelimit.memory.keys.not.held}: checks of new keys the in-memory backend
   * decided as fresh without keeping their state, because the states that still matter filled
   * {@code ratelimit.memory.maximum-keys} (see {@link dev.ratelimit.memory.InMemoryBackend#keysNotHeld()}).
   */
  @Bean
  @ConditionalOnMissingBean(name = "rateLimitMemoryGauges")
  public io.micrometer.core.instrument.binder.MeterBinder rateLimitMemoryGauges(
      org.springframework.beans.factory.ObjectProvider<dev.ratelimit.spi.Backend> backends) {
    return registry -> backends.orderedStream()
        .filter(dev.ratelimit.memory.InMemoryBackend.class::isInstance)
        .map(dev.ratelimit.memory.InMemoryBackend.class::cast)
        .findFirst()
        .ifPresent(memory -> io.micrometer.core.instrument.FunctionCounter
            .builder(MEMORY_KEYS_NOT_HELD, memory, dev.ratelimit.memory.InMemoryBackend::keysNotHeld)
            .description("checks of new keys decided as fresh and not kept: the live states filled maximum-keys")
            .register(registry));
  }

  /** The name of the in-memory backend's counter of keys not held. */
  public static final String MEMORY_KEYS_NOT_HELD = "ratelimit.memory.keys.not.held";
}

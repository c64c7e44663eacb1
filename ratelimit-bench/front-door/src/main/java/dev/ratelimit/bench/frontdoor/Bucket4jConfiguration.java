package dev.ratelimit.bench.frontdoor;

import com.github.benmanes.caffeine.cache.Caffeine;
import dev.ratelimit.Policy;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.caffeine.Bucket4jCaffeine;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.redisson.Bucket4jRedisson;
import java.time.Duration;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The Bucket4j rows ({@code bench.bucket4j=memory} or {@code redis}): a proxy manager, and {@link
 * Bucket4jStarterFilter} in front of {@code /work}. Both proxy managers expire a bucket 10 s after
 * it would be full again, as the starter's Redisson resolver sets.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnExpression("'${bench.bucket4j:off}' != 'off'")
class Bucket4jConfiguration {
  private static final ExpirationAfterWriteStrategy EXPIRY =
      ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ofSeconds(10));

  /** In memory: Bucket4j's Caffeine proxy manager, bounded as our in-memory backend is by default. */
  @Bean
  @ConditionalOnProperty(name = "bench.bucket4j", havingValue = "memory")
  ProxyManager<String> bucket4jMemory() {
    return Bucket4jCaffeine.<String>builderFor(Caffeine.newBuilder().maximumSize(1_000_000))
        .expirationAfterWrite(EXPIRY)
        .build();
  }

  /** A Redisson client with Redisson's defaults, as an application using the starter has. */
  @Bean(destroyMethod = "shutdown")
  @ConditionalOnProperty(name = "bench.bucket4j", havingValue = "redis")
  RedissonClient bucket4jRedisson(FrontDoorApplication.Settings settings) {
    Config config = new Config();
    config.useSingleServer().setAddress(settings.redisUrl());
    return Redisson.create(config);
  }

  /** On Redis: Bucket4j's compare-and-swap proxy manager over Redisson, which the starter uses. */
  @Bean
  @ConditionalOnProperty(name = "bench.bucket4j", havingValue = "redis")
  ProxyManager<String> bucket4jRedis(RedissonClient redisson) {
    return Bucket4jRedisson.casBasedBuilder(((Redisson) redisson).getCommandExecutor())
        .expirationAfterWrite(EXPIRY)
        .build();
  }

  /** The filter, with the policy as the starter's bandwidth: capacity = limit, greedy refill over the window. */
  @Bean
  FilterRegistrationBean<Bucket4jStarterFilter> bucket4jFilter(ProxyManager<String> buckets,
      FrontDoorApplication.Settings settings, BeanFactory beans) {
    Policy policy = settings.policy();
    BucketConfiguration configuration = BucketConfiguration.builder()
        .addLimit(limit -> limit.capacity(policy.limit()).refillGreedy(policy.limit(), policy.window()))
        .build();
    FilterRegistrationBean<Bucket4jStarterFilter> registration = new FilterRegistrationBean<>(
        new Bucket4jStarterFilter(buckets, configuration, settings.keyPrefix(), beans));
    registration.setOrder(-101); // where our filter runs by default
    return registration;
  }
}

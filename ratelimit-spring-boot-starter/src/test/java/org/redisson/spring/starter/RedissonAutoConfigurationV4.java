package org.redisson.spring.starter;

import dev.ratelimit.tck.redis.RedisServer;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * For tests only: a stand-in with the name of Redisson's own Spring Boot 4 auto-configuration
 * (redisson-spring-boot-starter is not a dependency here), making its {@link RedissonClient} as
 * that one does: as an auto-configuration, which the starter's must run after to see it.
 */
@AutoConfiguration
public class RedissonAutoConfigurationV4 {
  @Bean(destroyMethod = "shutdown")
  RedissonClient redisson() {
    Config config = new Config();
    config.useSingleServer().setAddress(RedisServer.shared().url());
    return Redisson.create(config);
  }
}

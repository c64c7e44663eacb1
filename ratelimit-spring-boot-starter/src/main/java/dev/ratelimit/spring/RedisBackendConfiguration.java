package dev.ratelimit.spring;

import dev.ratelimit.redis.RedisBackend;
import dev.ratelimit.redis.RedisUrl;
import java.time.Duration;
import dev.ratelimit.spi.Backend;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.availability.ApplicationAvailability;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.ConfigurationCondition;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * The Redis backend, when {@code ratelimit.backend=redis}, or {@code auto} and Redis is configured:
 * {@code ratelimit.redis.url}, Boot's {@code spring.data.redis.url}/{@code host}, or a
 * {@link RedissonClient} bean of the application (which is then used as it is).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({RedissonClient.class, RedisBackend.class})
@Conditional(RedisBackendConfiguration.RedisSelected.class)
class RedisBackendConfiguration {

  @Bean
  @ConditionalOnMissingBean(Backend.class)
  Backend redisRateLimitBackend(RateLimitProperties properties, ObjectProvider<RedissonClient> clients,
      OwnRedissonClient own, Environment environment) {
    Duration redisTimeout = redisTimeout(properties, environment);
    RedissonClient client = clients.getIfUnique(own::client);
    return RedisBackend.builder(client)
        .keyPrefix(properties.getRedis().getKeyPrefix())
        .timeout(redisTimeout)
        .loadScriptsEagerly(false) // the application starts while Redis is down; BackendReadiness loads them
        .build();
  }

  /**
   * Connects and loads the scripts in the background, retrying until Redis answers, so that the
   * first real check does not pay for a lazy connection (and lose to the limiter's timeout); until
   * then the application is not ready, unless {@code ratelimit.readiness.enabled=false}. For the
   * application's own backend bean too, when it is a {@link RedisBackend}.
   */
  @Bean
  @ConditionalOnMissingBean
  BackendReadiness rateLimitBackendReadiness(ObjectProvider<Backend> backend, RateLimitProperties properties,
      ApplicationEventPublisher publisher, ObjectProvider<ApplicationAvailability> availability) {
    Backend b = backend.getIfUnique();
    return new BackendReadiness(b instanceof RedisBackend redis ? redis : null, properties.getReadiness().isEnabled(),
        publisher, availability.getIfAvailable());
  }

  @Bean
  OwnRedissonClient rateLimitOwnRedissonClient(RateLimitProperties properties, Environment environment) {
    return new OwnRedissonClient(properties, environment);
  }

  /** A Redisson client of our own, made only when the application has none, and shut down with the context. */
  static final class OwnRedissonClient implements AutoCloseable {
    private final RateLimitProperties properties;
    private final Environment environment;
    private RedissonClient client;

    OwnRedissonClient(RateLimitProperties properties, Environment environment) {
      this.properties = properties;
      this.environment = environment;
    }

    synchronized RedissonClient client() {
      if (client == null) {
        String url = redisUrl(properties, environment);
        if (url == null) {
          throw new IllegalStateException("ratelimit.backend=redis needs ratelimit.redis.url, "
              + "spring.data.redis.url or spring.data.redis.host, or a RedissonClient bean");
        }
        Config config = new Config();
        config.setLazyInitialization(true);
        if (properties.getRedis().getUrl() == null) { // Boot's Redis: Boot's credentials (ours: in the URL)
          // on the Config: Redisson 4 deprecates them on the server settings (and says so in the log)
          String username = environment.getProperty("spring.data.redis.username");
          if (username != null && !username.isEmpty()) {
            config.setUsername(username);
          }
          String password = environment.getProperty("spring.data.redis.password");
          if (password != null && !password.isEmpty()) {
            config.setPassword(password);
          }
        }
        RedisUrl parsed;
        try {
          parsed = RedisUrl.parse(url); // the port defaults to 6379, the path is the database: as the servlet's file
        } catch (IllegalArgumentException e) {
          throw new IllegalStateException((properties.getRedis().getUrl() != null ? "ratelimit.redis.url"
              : "spring.data.redis.url (or host and port)") + ": " + e.getMessage(), e);
        }
        config.useSingleServer()
            .setAddress(parsed.address())
            .setDatabase(parsed.database())
            .setTimeout((int) redisTimeout(properties, environment).toMillis())
            .setRetryAttempts(0);
        client = Redisson.create(config);
      }
      return client;
    }

    @Override
    public synchronized void close() {
      if (client != null) {
        client.shutdown();
      }
    }
  }

  /**
   * How long a Redis call may take: {@code ratelimit.redis.timeout}, but when that is not set
   * never longer than {@code ratelimit.timeout}; set longer, start-up fails naming both. A Redis
   * call that outlived the limiter's wait could still count a check the failure mode had decided
   * (this keeps Redisson from waiting on after the limiter; a command already sent may still run).
   */
  static Duration redisTimeout(RateLimitProperties properties, Environment environment) {
    Duration redis = properties.getRedis().getTimeout();
    Duration limiter = properties.getTimeout();
    if (limiter == null || limiter.isNegative() || limiter.isZero() || redis.compareTo(limiter) <= 0) {
      return redis; // a bad ratelimit.timeout is reported by the limiter's own validation
    }
    if (!environment.containsProperty("ratelimit.redis.timeout")) {
      return limiter; // the default, shortened to the limiter's timeout
    }
    throw new IllegalStateException("ratelimit.redis.timeout (" + redis.toMillis() + " ms) is longer than "
        + "ratelimit.timeout (" + limiter.toMillis() + " ms): Redisson would still wait for checks the limiter "
        + "has given up on; set ratelimit.timeout at least as long, or ratelimit.redis.timeout shorter");
  }

  static String redisUrl(RateLimitProperties properties, Environment environment) {
    if (properties.getRedis().getUrl() != null) {
      return properties.getRedis().getUrl();
    }
    String url = environment.getProperty("spring.data.redis.url");
    if (url != null) {
      return url;
    }
    String host = environment.getProperty("spring.data.redis.host");
    if (host == null) {
      return null;
    }
    String port = environment.getProperty("spring.data.redis.port", "6379");
    boolean ipv6 = host.contains(":") && !host.startsWith("[");
    return "redis://" + (ipv6 ? "[" + host + "]" : host) + ":" + port;
  }

  /**
   * Redis is selected explicitly, or by {@code auto} when something configures it. Evaluated when
   * beans are registered, so that the application's own RedissonClient bean is visible.
   */
  static final class RedisSelected extends SpringBootCondition implements ConfigurationCondition {
    @Override
    public ConfigurationPhase getConfigurationPhase() {
      return ConfigurationPhase.REGISTER_BEAN;
    }

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
      Environment env = context.getEnvironment();
      String backend = env.getProperty("ratelimit.backend", "auto").trim().toLowerCase(java.util.Locale.ROOT);
      if (backend.equals("redis")) {
        return ConditionOutcome.match("ratelimit.backend=redis");
      }
      if (!backend.equals("auto")) {
        return ConditionOutcome.noMatch("ratelimit.backend=" + backend);
      }
      if (env.containsProperty("ratelimit.redis.url") || env.containsProperty("spring.data.redis.url")
          || env.containsProperty("spring.data.redis.host")) {
        return ConditionOutcome.match("ratelimit.backend=auto and a Redis URL or host is configured");
      }
      if (context.getBeanFactory() != null
          && context.getBeanFactory().getBeanNamesForType(RedissonClient.class, true, false).length > 0) {
        return ConditionOutcome.match("ratelimit.backend=auto and a RedissonClient bean exists");
      }
      return ConditionOutcome.noMatch("ratelimit.backend=auto and no Redis configured");
    }
  }
}

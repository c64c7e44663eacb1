package dev.ratelimit.spring;

import dev.ratelimit.redis.RedisBackend;
import dev.ratelimit.redis.RedisClients;
import dev.ratelimit.redis.RedisUrl;
import java.time.Duration;
import java.util.List;
import dev.ratelimit.spi.Backend;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.util.ClassUtils;
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
 * The Redis backend, when {@code ratelimit.backend=redis}, or {@code auto} and Redis is configured.
 * Its Redisson client is, in this order: a {@link RedissonClient} bean of the application (used as
 * it is); one of our own for {@code ratelimit.redis.url}; one of our own from Boot's Redis
 * connection details ({@code spring.data.redis.*} or a service connection: one server, Sentinel or
 * Cluster, credentials, TLS, database, timeouts), when spring-boot-data-redis is on the classpath;
 * else one from {@code spring.data.redis.url} or {@code host} and {@code port}, with {@code
 * username} and {@code password}. A client of our own is checked once at start-up
 * ({@link RedisClients}): refused credentials fail start-up, a Redis that is down does not.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({RedissonClient.class, RedisBackend.class})
@Conditional(RedisBackendConfiguration.RedisSelected.class)
class RedisBackendConfiguration {
  private static final String CONNECTION_DETAILS =
      "org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails";
  private static final String DETAILS_FROM_PROPERTIES =
      "org.springframework.boot.data.redis.autoconfigure.PropertiesDataRedisConnectionDetails";

  @Bean
  @ConditionalOnMissingBean(Backend.class)
  Backend redisRateLimitBackend(RateLimitProperties properties, ObjectProvider<RedissonClient> clients,
      OwnRedissonClient own) {
    RedissonClient application = clients.getIfUnique();
    RedissonClient client = application != null ? application : own.client();
    Duration redisTimeout = application != null ? own.applicationClientTimeout() : own.timeout();
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
    Duration maxWait = properties.getReadiness().getMaxWait();
    if (maxWait == null || maxWait.isNegative() || maxWait.isZero()) {
      throw new IllegalArgumentException("ratelimit.readiness.max-wait must be positive, was " + maxWait
          + " (e.g. 30s; to leave readiness to Boot alone, set ratelimit.readiness.enabled=false)");
    }
    return new BackendReadiness(b instanceof RedisBackend redis ? redis : null, properties.getReadiness().isEnabled(),
        maxWait, publisher, availability.getIfAvailable());
  }

  @Bean
  OwnRedissonClient rateLimitOwnRedissonClient(RateLimitProperties properties, Environment environment,
      ObjectProvider<RedisConnectionPlan.Source> boot) {
    return new OwnRedissonClient(properties, environment, boot.getIfAvailable());
  }

  /** Boot's Redis connection details, when spring-boot-data-redis is on the classpath. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = CONNECTION_DETAILS)
  static class BootConnectionDetails {
    @Bean
    RedisConnectionPlan.Source rateLimitRedisConnectionDetails(
        ObjectProvider<org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails> details,
        Environment environment) {
      return new ConnectionDetailsRedisson(details, environment);
    }
  }

  /** A Redisson client of our own, made only when the application has none, and shut down with the context. */
  static final class OwnRedissonClient implements AutoCloseable {
    private final RateLimitProperties properties;
    private final Environment environment;
    private final RedisConnectionPlan.Source boot;
    private RedissonClient client;
    private Duration timeout;

    OwnRedissonClient(RateLimitProperties properties, Environment environment, RedisConnectionPlan.Source boot) {
      this.properties = properties;
      this.environment = environment;
      this.boot = boot;
    }

    /** How long one call of the backend on our client may take; see {@link #redisTimeout}. */
    synchronized Duration timeout() {
      client();
      return timeout;
    }

    /** How long one call of the backend on the application's client may take. */
    Duration applicationClientTimeout() {
      return redisTimeout(properties, environment, null);
    }

    synchronized RedissonClient client() {
      if (client != null) {
        return client;
      }
      String url = properties.getRedis().getUrl();
      if (url != null) {
        timeout = redisTimeout(properties, environment, null);
        client = RedisClients.open(url, timeout, "ratelimit.redis.url");
        return client;
      }
      // Boot's timeouts apply to the Redis Boot configured: the command timeout when it is shorter
      Duration bootTimeout = duration("spring.data.redis.timeout");
      timeout = redisTimeout(properties, environment, bootTimeout);
      Duration connectTimeout = duration("spring.data.redis.connect-timeout");
      if (connectTimeout == null || connectTimeout.isNegative() || connectTimeout.isZero()) {
        connectTimeout = timeout;
      }
      RedisConnectionPlan plan = boot == null ? null : boot.plan(millis(timeout), millis(connectTimeout));
      if (plan == null) {
        plan = fromProperties(millis(timeout), millis(connectTimeout));
      }
      client = RedisClients.open(plan.config(), connectTimeout.plus(timeout).multipliedBy(2), plan.subject(),
          plan.fix());
      return client;
    }

    /** Without Boot's connection details: spring.data.redis.url, or host and port; username, password. */
    private RedisConnectionPlan fromProperties(int timeoutMillis, int connectTimeoutMillis) {
      String url = bootRedisUrl(environment);
      if (url == null) {
        throw new IllegalStateException("ratelimit.backend=redis needs ratelimit.redis.url, "
            + "spring.data.redis.url or spring.data.redis.host, or a RedissonClient bean");
      }
      RedisUrl parsed;
      try {
        parsed = RedisUrl.parse(url); // the port defaults to 6379, the path is the database: as the servlet's file
      } catch (IllegalArgumentException e) {
        throw new IllegalStateException("spring.data.redis.url (or host and port): " + e.getMessage(), e);
      }
      Config config = new Config();
      // on the Config: Redisson 4 deprecates them on the server settings (and says so in the log)
      String username = environment.getProperty("spring.data.redis.username");
      if (username != null && !username.isEmpty()) {
        config.setUsername(username);
      }
      String password = environment.getProperty("spring.data.redis.password");
      if (password != null && !password.isEmpty()) {
        config.setPassword(password);
      }
      config.useSingleServer()
          .setAddress(parsed.address())
          .setDatabase(parsed.database())
          .setTimeout(timeoutMillis)
          .setConnectTimeout(connectTimeoutMillis)
          .setRetryAttempts(0);
      return new RedisConnectionPlan(config, "spring.data.redis: Redis at " + RedisUrl.redact(url),
          "check spring.data.redis.username and spring.data.redis.password (or the user and password in "
              + "spring.data.redis.url) and the database");
    }

    private Duration duration(String property) {
      return Binder.get(environment).bind(property, Duration.class).orElse(null);
    }

    @Override
    public synchronized void close() {
      if (client != null) {
        client.shutdown();
      }
    }
  }

  private static int millis(Duration d) {
    return (int) Math.min(Integer.MAX_VALUE, d.toMillis());
  }

  /**
   * How long a Redis call may take: {@code ratelimit.redis.timeout}, but when that is not set
   * never longer than {@code ratelimit.timeout}, nor than {@code bootTimeout} (Boot's {@code
   * spring.data.redis.timeout} for the Redis Boot configured; null: none); set longer than {@code
   * ratelimit.timeout}, start-up fails naming both. A Redis call that outlived the limiter's wait
   * could still count a check the failure mode had decided (this keeps Redisson from waiting on
   * after the limiter; a command already sent may still run).
   */
  static Duration redisTimeout(RateLimitProperties properties, Environment environment, Duration bootTimeout) {
    Duration redis = properties.getRedis().getTimeout();
    boolean explicit = environment.containsProperty("ratelimit.redis.timeout");
    if (!explicit && bootTimeout != null && !bootTimeout.isNegative() && !bootTimeout.isZero()
        && bootTimeout.compareTo(redis) < 0) {
      redis = bootTimeout;
    }
    Duration limiter = properties.getTimeout();
    if (limiter == null || limiter.isNegative() || limiter.isZero() || redis.compareTo(limiter) <= 0) {
      return redis; // a bad ratelimit.timeout is reported by the limiter's own validation
    }
    if (!explicit) {
      return limiter; // the default, shortened to the limiter's timeout
    }
    throw new IllegalStateException("ratelimit.redis.timeout (" + redis.toMillis() + " ms) is longer than "
        + "ratelimit.timeout (" + limiter.toMillis() + " ms): Redisson would still wait for checks the limiter "
        + "has given up on; set ratelimit.timeout at least as long, or ratelimit.redis.timeout shorter");
  }

  /** spring.data.redis.url, or one made of spring.data.redis.host and port; null when neither is set. */
  static String bootRedisUrl(Environment environment) {
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
      Binder binder = Binder.get(env);
      for (String nodes : List.of("spring.data.redis.sentinel.nodes", "spring.data.redis.cluster.nodes")) {
        if (binder.bind(nodes, Bindable.listOf(String.class)).map(l -> !l.isEmpty()).orElse(false)) {
          return ConditionOutcome.match("ratelimit.backend=auto and " + nodes + " is configured");
        }
      }
      ConfigurableListableBeanFactory beans = context.getBeanFactory();
      if (beans == null) {
        return ConditionOutcome.noMatch("ratelimit.backend=auto and no Redis configured");
      }
      if (beans.getBeanNamesForType(RedissonClient.class, true, false).length > 0) {
        return ConditionOutcome.match("ratelimit.backend=auto and a RedissonClient bean exists");
      }
      if (ClassUtils.isPresent(CONNECTION_DETAILS, context.getClassLoader())) {
        // Boot's own details are there whenever spring-data-redis is (localhost:6379 by default):
        // only those of a service connection (Testcontainers, Docker Compose) say Redis is configured
        Class<?> type = ClassUtils.resolveClassName(CONNECTION_DETAILS, context.getClassLoader());
        for (String name : beans.getBeanNamesForType(type, true, false)) {
          Class<?> details = beans.getType(name, false);
          if (details != null && !details.getName().equals(DETAILS_FROM_PROPERTIES)) {
            return ConditionOutcome.match("ratelimit.backend=auto and a Redis service connection (" + name + ")");
          }
        }
      }
      return ConditionOutcome.noMatch("ratelimit.backend=auto and no Redis configured");
    }
  }
}

package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.redis.RedisBackend;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The auto-configuration matrix: defaults, back-off, properties, missing classes, bad configuration. */
class RateLimitAutoConfigurationTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, AopAutoConfiguration.class));

  @Test
  void defaultsToAnInMemoryLimiterWithTheAspect() {
    runner.run(context -> {
      assertThat(context).hasSingleBean(RateLimiter.class).hasSingleBean(RateLimitAspect.class)
          .hasSingleBean(PolicyRegistry.class);
      assertThat(context.getBean(Backend.class)).isInstanceOf(InMemoryBackend.class);
    });
  }

  @Test
  void canBeSwitchedOff() {
    runner.withPropertyValues("ratelimit.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(RateLimiter.class).doesNotHaveBean(RateLimitAspect.class));
  }

  @Test
  void backsOffForTheApplicationsOwnBeans() {
    runner.withUserConfiguration(OwnBeans.class).run(context -> {
      assertThat(context.getBean(RateLimiter.class)).isSameAs(OwnBeans.LIMITER);
      assertThat(context.getBean(Backend.class)).isSameAs(OwnBeans.BACKEND);
    });
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnBeans {
    static final InMemoryBackend BACKEND = InMemoryBackend.create();
    static final RateLimiter LIMITER = RateLimiter.builder().backend(InMemoryBackend.create()).build();

    @Bean
    Backend backend() {
      return BACKEND;
    }

    @Bean
    RateLimiter limiter() {
      return LIMITER;
    }
  }

  @Test
  void namedPoliciesComeFromProperties() {
    runner.withPropertyValues("ratelimit.policies.api.limit=100", "ratelimit.policies.api.window=1m",
        "ratelimit.policies.login.limit=5", "ratelimit.policies.login.window=5m",
        "ratelimit.policies.login.algorithm=SLIDING_LOG", "ratelimit.policies.burst.limit=10",
        "ratelimit.policies.burst.window=1s", "ratelimit.policies.burst.burst=3").run(context -> {
          PolicyRegistry registry = context.getBean(PolicyRegistry.class);
          assertThat(registry.all()).containsKeys("api", "login", "burst");
          assertThat(registry.get("api", "test")).isEqualTo(Policy.of(100, Duration.ofMinutes(1)).withName("api"));
          assertThat(registry.get("login", "test").algorithm()).isEqualTo(Algorithm.SLIDING_LOG);
          assertThat(registry.get("burst", "test").burst()).isEqualTo(3);
        });
  }

  @Test
  void aBadPolicyFailsStartUpNamingTheProperty() {
    runner.withPropertyValues("ratelimit.policies.api.limit=100", "ratelimit.policies.api.window=1 minute")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("ratelimit.policies.api").hasStackTraceContaining("'1 minute'"));
    runner.withPropertyValues("ratelimit.policies.api.limit=0", "ratelimit.policies.api.window=1m")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("ratelimit.policies.api").hasStackTraceContaining("limit must be at least 1"));
    runner.withPropertyValues("ratelimit.policies.api.window=1m")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("ratelimit.policies.api.limit is required"));
    runner.withPropertyValues("ratelimit.policies[café].limit=5", "ratelimit.policies[café].window=1m")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("policy name 'café' (ratelimit.policies.café)")
            .hasStackTraceContaining("printable ASCII"));
  }

  @Test
  void aBadDeniedResponseFailsStartUpNamingTheProperty() {
    var web = new org.springframework.boot.test.context.runner.WebApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, AopAutoConfiguration.class))
        .withPropertyValues("ratelimit.policies.api.limit=10", "ratelimit.policies.api.window=1m");
    web.withPropertyValues("ratelimit.denied-response.status=302").run(context -> assertThat(context).hasFailed()
        .getFailure().hasStackTraceContaining("ratelimit.denied-response.status: status 302 is not a 4xx or 5xx"));
    web.withPropertyValues("ratelimit.denied-response.content-type=application/json",
        "ratelimit.denied-response.body={\"p\":\"{{polcy}}\"}").run(context -> assertThat(context).hasFailed()
        .getFailure().hasStackTraceContaining("ratelimit.denied-response.body: unknown placeholder '{{polcy}}'"));
    web.withPropertyValues("ratelimit.denied-response.body=slow down").run(context -> assertThat(context)
        .hasFailed().getFailure()
        .hasStackTraceContaining("ratelimit.denied-response.content-type: a body needs a content type"));
    web.withPropertyValues("ratelimit.denied-response.headers[Retry-After]=1").run(context -> assertThat(context)
        .hasFailed().getFailure().hasStackTraceContaining(
            "ratelimit.denied-response.headers.Retry-After: header 'Retry-After' is written by the limiter itself"));
    web.withPropertyValues("ratelimit.filter.rules[0].name=r", "ratelimit.filter.rules[0].paths=/api/**",
        "ratelimit.filter.rules[0].policies=api", "ratelimit.filter.rules[0].denied-response.status=200")
        .run(context -> assertThat(context).hasFailed().getFailure().hasStackTraceContaining(
            "ratelimit.filter.rules[0].denied-response.status: status 200 is not a 4xx or 5xx status"));
    web.withPropertyValues("ratelimit.denied-response.status=503").run(context -> assertThat(context)
        .hasNotFailed().getBean(dev.ratelimit.http.DeniedResponse.class)
        .extracting(dev.ratelimit.http.DeniedResponse::status).isEqualTo(503));
  }

  @Test
  void badTrustedProxiesFailStartUp() {
    runner.withPropertyValues("ratelimit.trusted-proxies=10.0.0.0/33")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("10.0.0.0/33"));
  }

  @Test
  void badFilterRulesFailStartUpNamingTheProperty() {
    var web = new org.springframework.boot.test.context.runner.WebApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, AopAutoConfiguration.class))
        .withPropertyValues("ratelimit.policies.api.limit=10", "ratelimit.policies.api.window=1m");
    web.withPropertyValues("ratelimit.filter.rules[0].name=r", "ratelimit.filter.rules[0].paths=/api/**",
        "ratelimit.filter.rules[0].policies=nope").run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("ratelimit.filter.rules[0]").hasStackTraceContaining("unknown policy 'nope'"));
    web.withPropertyValues("ratelimit.filter.rules[0].name=r", "ratelimit.filter.rules[0].paths=/api/**",
        "ratelimit.filter.rules[0].policies=api", "ratelimit.filter.rules[0].key=#clientIp +")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("ratelimit.filter.rules[0]").hasStackTraceContaining("#clientIp +"));
    web.withPropertyValues("ratelimit.filter.rules[0].paths=/api/**", "ratelimit.filter.rules[0].policies=api")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("ratelimit.filter.rules[0].name is required"));
    web.withPropertyValues("ratelimit.filter.rules[0].name=r", "ratelimit.filter.rules[0].paths=/api/**",
        "ratelimit.filter.rules[0].policies=api").run(context -> assertThat(context).hasNotFailed()
            .hasBean("rateLimitFilter"));
  }

  @Test
  void configurationMetadataIsGenerated() throws Exception {
    try (var in = getClass().getClassLoader().getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
      assertThat(in).isNotNull();
      String json = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      assertThat(json).contains("\"ratelimit.backend\"", "\"ratelimit.redis.timeout\"", "\"ratelimit.filter.rules\"",
          "How long one Redis call may take", "\"ratelimit.log-denials\"", "\"ratelimit.log-denials-include-key\"",
          "\"ratelimit.log-denials-max-per-second\"", "The most denial log lines per second");
    }
  }

  @Test
  void limiterSettingsComeFromProperties() {
    runner.withPropertyValues("ratelimit.shadow=true").run(context -> {
      RateLimiter limiter = context.getBean(RateLimiter.class);
      Policy p = Policy.parse("1/1m");
      assertThat(limiter.check("k", p).allowed()).isTrue();
      assertThat(limiter.check("k", p).allowed()).as("shadow mode never blocks").isTrue();
    });
    runner.withPropertyValues("ratelimit.shadow-policies=dark").run(context -> {
      RateLimiter limiter = context.getBean(RateLimiter.class);
      Policy dark = Policy.parse("1/1m").withName("dark");
      Policy lit = Policy.parse("1/1m").withName("lit");
      limiter.check("k", dark);
      limiter.check("k", lit);
      assertThat(limiter.check("k", dark).allowed()).isTrue();
      assertThat(limiter.check("k", lit).allowed()).isFalse();
    });
    runner.withPropertyValues("ratelimit.near-cache=true").run(context -> {
      RateLimiter limiter = context.getBean(RateLimiter.class);
      Policy p = Policy.parse("1/1m");
      limiter.check("k", p);
      limiter.check("k", p);
      assertThat(limiter.nearCacheSize()).as("forced on, the near-cache tracks the key").isEqualTo(1);
    });
    runner.run(context -> {
      RateLimiter limiter = context.getBean(RateLimiter.class);
      Policy p = Policy.parse("1/1m");
      limiter.check("k", p);
      limiter.check("k", p);
      assertThat(limiter.nearCacheSize()).as("off by default for the in-memory backend").isZero();
    });
    runner.withPropertyValues("ratelimit.timeout=0s").run(context -> assertThat(context).hasFailed()
        .getFailure().hasStackTraceContaining("invalid ratelimit.* limiter setting").hasStackTraceContaining("timeout"));
    runner.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.url=redis://127.0.0.1:1",
        "ratelimit.redis.timeout=1s").run(context -> assertThat(context).hasFailed().getFailure()
        .hasStackTraceContaining("ratelimit.redis.timeout (1000 ms) is longer than ratelimit.timeout (250 ms)"));
    runner.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.url=redis://127.0.0.1:1",
        "ratelimit.timeout=150ms").run(context -> assertThat(context).hasNotFailed());
    assertThat(RedisBackendConfiguration.bootRedisUrl(
        new org.springframework.mock.env.MockEnvironment().withProperty("spring.data.redis.host", "::1")))
        .as("an IPv6 host in brackets").isEqualTo("redis://[::1]:6379");
    RateLimitProperties shortWait = new RateLimitProperties();
    shortWait.setTimeout(Duration.ofMillis(150));
    assertThat(RedisBackendConfiguration.redisTimeout(shortWait, new org.springframework.mock.env.MockEnvironment(), null))
        .as("the default Redis timeout, shortened to the limiter's").isEqualTo(Duration.ofMillis(150));
    runner.withPropertyValues("ratelimit.local-fallback-share=1.5").run(context -> assertThat(context).hasFailed()
        .getFailure().hasStackTraceContaining("1.5"));
    runner.withPropertyValues("ratelimit.near-cache=true", "ratelimit.near-cache-maximum-entries=2").run(context -> {
      RateLimiter limiter = context.getBean(RateLimiter.class);
      Policy p = Policy.parse("1/1m");
      for (int i = 0; i < 20; i++) {
        limiter.check("k" + i, p);
        assertThat(limiter.check("k" + i, p).allowed()).isFalse();
      }
      assertThat(limiter.nearCacheSize()).as("bounded by the property").isLessThanOrEqualTo(2).isPositive();
    });
    runner.withPropertyValues("ratelimit.near-cache-maximum-entries=0").run(context -> assertThat(context).hasFailed()
        .getFailure().hasStackTraceContaining("invalid ratelimit.* limiter setting")
        .hasStackTraceContaining("nearCacheMaximumEntries"));
  }

  @Test
  void redisBackendFromAUrl() {
    runner.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.url=" + RedisServer.shared().url(),
        "ratelimit.redis.key-prefix=" + "starter-" + System.nanoTime()).run(context -> {
          assertThat(context.getBean(Backend.class)).isInstanceOf(RedisBackend.class);
          RateLimiter limiter = context.getBean(RateLimiter.class);
          RedisWarmUp.warmUp(limiter);
          Policy p = Policy.of(2, Duration.ofMinutes(1));
          assertThat(limiter.check("k", p, 2).allowed()).isTrue();
          assertThat(limiter.check("k", p).allowed()).isFalse();
        });
  }

  @Test
  void autoUsesBootsSpringDataRedisSettings() {
    RedisServer redis = RedisServer.shared();
    runner.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
        "ratelimit.redis.key-prefix=" + "starter-" + System.nanoTime(), "ratelimit.timeout=5s").run(context -> {
          assertThat(context.getBean(Backend.class)).isInstanceOf(RedisBackend.class);
          RateLimiter limiter = context.getBean(RateLimiter.class);
          Policy p = Policy.parse("1/1m");
          assertThat(limiter.check("k", p).isDegraded()).isFalse();
          assertThat(limiter.check("k", p).allowed()).isFalse();
        });
  }

  @Test
  void theUrlsPathIsTheDatabaseAsInTheServletFilesUrl() {
    try (RedisServer redis = RedisServer.start()) { // its own server: the test reads its keyspace
      runner.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.url=" + redis.url() + "/3",
          "ratelimit.timeout=5s", "ratelimit.redis.timeout=5s").run(context ->
          assertThat(context.getBean(RateLimiter.class).check("k", Policy.parse("1/1m")).isDegraded()).isFalse());
      assertThat(redis.info("keyspace")).as("the check's key is in database 3").contains("db3:keys=1")
          .doesNotContain("db0:");
      runner.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.url=redis://u:hunter2@h/x")
          .run(context -> assertThat(context).hasFailed().getFailure()
              .hasStackTraceContaining("ratelimit.redis.url: 'redis://***@h/x': the path must be a database number"));
    }
  }

  @Test
  void bootsRedisUsernameAndPasswordAreUsed() {
    try (RedisServer redis = RedisServer.start()) { // its own server: the test changes its users
      redis.command("ACL", "SETUSER", "limiter", "on", ">s3cret", "~*", "+@all");
      String prefix = "ratelimit.redis.key-prefix=starter-" + System.nanoTime();
      // ratelimit.redis.url names its own Redis: Boot's credentials (for Boot's Redis) are not sent to it
      runner.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.url=" + redis.url(),
          "spring.data.redis.username=someone", "spring.data.redis.password=else", prefix + "-url",
          "ratelimit.timeout=5s")
          .run(context -> assertThat(context.getBean(RateLimiter.class).check("k", Policy.parse("1/1m")).isDegraded())
              .as("no AUTH with Boot's credentials").isFalse());
      redis.command("ACL", "SETUSER", "default", "off");
      runner.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
          "spring.data.redis.username=limiter", "spring.data.redis.password=s3cret", prefix, "ratelimit.timeout=5s")
          .run(context -> {
            RateLimiter limiter = context.getBean(RateLimiter.class);
            Policy p = Policy.parse("1/1m");
            assertThat(limiter.check("k", p).isDegraded()).as("Redis answered").isFalse();
            assertThat(limiter.check("k", p).allowed()).isFalse();
          });
      // refused by Redis: start-up fails, where every check would have fallen to the failure mode
      runner.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
          "spring.data.redis.username=limiter", "spring.data.redis.password=wrong", prefix, "ratelimit.timeout=2s")
          .run(context -> assertThat(context).hasFailed().getFailure()
              .hasStackTraceContaining("spring.data.redis: Redis at redis://" + redis.host() + ":" + redis.port()
                  + " refused the connection (WRONGPASS")
              .hasStackTraceContaining("check spring.data.redis.username and spring.data.redis.password")
              .satisfies(e -> assertThat(stackTrace(e)).doesNotContain("wrong")));
      runner.withPropertyValues("ratelimit.backend=redis",
          "ratelimit.redis.url=redis://limiter:hunter2@" + redis.host() + ":" + redis.port(), prefix)
          .run(context -> assertThat(context).hasFailed().getFailure()
              .hasStackTraceContaining("ratelimit.redis.url: Redis at redis://***@" + redis.host() + ":"
                  + redis.port() + " refused the connection (WRONGPASS")
              .satisfies(e -> assertThat(stackTrace(e)).doesNotContain("hunter2")));
      // credentials in ratelimit.redis.url
      runner.withPropertyValues("ratelimit.backend=redis",
          "ratelimit.redis.url=redis://limiter:s3cret@" + redis.host() + ":" + redis.port(),
          "spring.data.redis.username=someone", "spring.data.redis.password=else", prefix, "ratelimit.timeout=5s")
          .run(context -> assertThat(context.getBean(RateLimiter.class).check("k", Policy.parse("1/1m")).allowed())
              .as("the URL's user, who consumed the limit above").isFalse());
    }
  }

  private static String stackTrace(Throwable e) {
    java.io.StringWriter out = new java.io.StringWriter();
    e.printStackTrace(new java.io.PrintWriter(out));
    return out.toString();
  }

  @Test
  void aNodeOfAClusterOfSeveralInRatelimitRedisUrlFailsStartUp() {
    String node = dev.ratelimit.tck.redis.RedisCluster.shared().nodes().get(0).url();
    runner.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.url=" + node, "ratelimit.timeout=2s")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("ratelimit.redis.url: Redis at " + node + " is a node of a Redis Cluster of 3")
            .hasStackTraceContaining("spring.data.redis.cluster.nodes"));
  }

  @Test
  void waitForReplicasReachesTheBackendAndABadTimeoutFailsStartUp() {
    dev.ratelimit.tck.redis.RedisServer redis = dev.ratelimit.tck.redis.RedisServer.shared(); // no replica
    String url = "ratelimit.redis.url=" + redis.url();
    String prefix = "ratelimit.redis.key-prefix=starter-" + System.nanoTime();
    runner.withPropertyValues("ratelimit.backend=redis", url, prefix, "ratelimit.failure-mode=fail-closed",
        "ratelimit.redis.wait-for-replicas=1", "ratelimit.redis.wait-for-replicas-timeout=20ms").run(context -> {
          RateLimiter limiter = context.getBean(RateLimiter.class);
          assertThat(limiter.check("k", Policy.parse("5/1m")).isDegraded())
              .as("no replica acknowledged the check: the failure mode decides").isTrue();
        });
    runner.withPropertyValues("ratelimit.backend=redis", url, prefix, "ratelimit.redis.wait-for-replicas=1",
        "ratelimit.redis.wait-for-replicas-timeout=200ms", "ratelimit.redis.timeout=200ms")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("ratelimit.redis.wait-for-replicas=1, ratelimit.redis.wait-for-replicas-timeout=PT0.2S")
            .hasStackTraceContaining("shorter than the Redis timeout"));
  }

  @Test
  void theOwnClientOfRatelimitRedisUrlWaitsForAConnectionAsForAReply() {
    runner.withPropertyValues("ratelimit.backend=redis", "ratelimit.redis.url=redis://127.0.0.1:1",
        "ratelimit.timeout=300ms", "ratelimit.redis.timeout=300ms").run(context -> {
          assertThat(context).hasNotFailed(); // Redis down: the application starts
          org.redisson.config.SingleServerConfig server = context.getBean(RedisBackendConfiguration.OwnRedissonClient.class)
              .client().getConfig().useSingleServer();
          assertThat(server.getConnectTimeout()).isEqualTo(300);
          assertThat(server.getTimeout()).isEqualTo(300);
          assertThat(server.getRetryAttempts()).isZero();
        });
  }

  @Test
  void autoUsesTheApplicationsRedissonClient() {
    runner.withUserConfiguration(OwnRedisson.class)
        .withPropertyValues("ratelimit.redis.key-prefix=" + "starter-" + System.nanoTime()).run(context -> {
          assertThat(context.getBean(Backend.class)).isInstanceOf(RedisBackend.class);
          assertThat(context.getBean(RateLimiter.class).check("k", Policy.parse("1/1m")).isDegraded()).isFalse();
        });
  }

  @Test
  void autoUsesTheRedissonClientOfRedissonsOwnAutoConfiguration() {
    // listed first, as the sorter would put it ("dev." before "org."): ordering must come from the starter
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
            org.redisson.spring.starter.RedissonAutoConfigurationV4.class))
        .withPropertyValues("ratelimit.redis.key-prefix=" + "starter-" + System.nanoTime()).run(context -> {
          assertThat(context).hasSingleBean(RedissonClient.class);
          assertThat(context.getBean(Backend.class)).isInstanceOf(RedisBackend.class);
        });
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnRedisson {
    @Bean(destroyMethod = "shutdown")
    RedissonClient redisson() {
      Config config = new Config();
      config.useSingleServer().setAddress(RedisServer.shared().url());
      return Redisson.create(config);
    }
  }

  @Test
  void autoWithoutRedisIsMemory() {
    runner.withPropertyValues("ratelimit.backend=auto")
        .run(context -> assertThat(context.getBean(Backend.class)).isInstanceOf(InMemoryBackend.class));
  }

  @Test
  void redisWithoutRedissonOnTheClassPathFailsStartUp() {
    runner.withClassLoader(new FilteredClassLoader(RedissonClient.class)).withPropertyValues("ratelimit.backend=redis")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("ratelimit.backend=redis needs"));
  }

  @Test
  void withoutAspectJThereIsNoAspectButStillALimiter() {
    runner.withClassLoader(new FilteredClassLoader("org.aspectj")).run(context -> {
      assertThat(context).hasSingleBean(RateLimiter.class).doesNotHaveBean(RateLimitAspect.class);
    });
  }

  @Test
  void anUnknownPolicyNameFailsStartUpNamingTheMethod() {
    runner.withUserConfiguration(UnknownPolicy.class)
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("unknown policy 'nope'")
            .hasStackTraceContaining(UnknownPolicyService.class.getName() + ".call"));
  }

  @Test
  void anUnparsableExpressionFailsStartUpNamingTheMethodAndExpression() {
    runner.withUserConfiguration(BadExpression.class)
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining(BadExpressionService.class.getName() + ".call")
            .hasStackTraceContaining("'#user.'"));
  }

  @Test
  void anInlineAnnotationWithoutAWindowFailsStartUp() {
    runner.withUserConfiguration(NoWindow.class)
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining(NoWindowService.class.getName() + ".call").hasStackTraceContaining("window"));
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(classes = {MisspeltVariableService.class,
      DifferentCostsService.class, ImpossibleCostService.class, NegativeCostService.class,
      MisspeltClassKeyService.class, NonAsciiNameService.class, ObjectKeyService.class})
  void aMistakeEveryCallWouldHitFailsStartUpNamingTheMethod(Class<?> service) {
    String[] expected = switch (service.getSimpleName()) {
      case "MisspeltVariableService" -> new String[] {"reads #usrId", "#userId (the parameters)"};
      case "DifferentCostsService" -> new String[] {"'2' and '1'", "the same cost expression"};
      case "NegativeCostService" -> new String[] {"cost -1", "capacity 5"};
      case "MisspeltClassKeyService" -> new String[] {"reads #tenat", "#p0/#a0"};
      case "NonAsciiNameService" -> new String[] {"policy name 'café' (name = \"café\")", "such as 'cafe'"};
      case "ObjectKeyService" -> new String[] {"gives a " + Account.class.getTypeName() + ", which is never a key",
          "such as #user.id"};
      default -> new String[] {"cost 10", "capacity 5"};
    };
    runner.withBean(service).run(context -> assertThat(context).hasFailed().getFailure()
        .hasStackTraceContaining(service.getName() + ".call")
        .hasStackTraceContaining(expected[0]).hasStackTraceContaining(expected[1]));
  }

  /** Would share the missing-key bucket on every call: #usrId is never set. */
  static class MisspeltVariableService {
    @RateLimited(key = "#usrId", limit = 1, window = "1s")
    public String call(String userId) {
      return userId;
    }
  }

  /** An object of the application's: never a key, every call would share the missing-key bucket. */
  static class ObjectKeyService {
    @RateLimited(key = "#account", limit = 1, window = "1s")
    public String call(Account account) {
      return account.id();
    }
  }

  record Account(String id) {}

  /** Would fail every call: one call has one cost. */
  static class DifferentCostsService {
    @RateLimited(key = "#user", limit = 5, window = "1s", cost = "2", name = "a")
    @RateLimited(key = "#user", limit = 5, window = "1s", name = "b")
    public String call(String user) {
      return user;
    }
  }

  /** A class's key naming a parameter none of its methods has: every call would share one bucket. */
  @RateLimited(key = "#tenat", limit = 1, window = "1m")
  public static class MisspeltClassKeyService {
    public String call(String tenant) {
      return tenant;
    }
  }

  @Test
  void twoClassesOfOneSimpleNameCannotShareADerivedPolicyName() {
    runner.withBean(First.Twin.class).withBean(Second.Twin.class).run(context -> assertThat(context).hasFailed()
        .getFailure().hasStackTraceContaining("derives the policy name 'Twin.call'")
        .hasStackTraceContaining("$Twin.call derives too")
        .hasStackTraceContaining("give one a name"));
  }

  static class First {
    public static class Twin {
      @RateLimited(key = "#user", limit = 1, window = "1m")
      public String call(String user) {
        return user;
      }
    }
  }

  static class Second {
    public static class Twin {
      @RateLimited(key = "#user", limit = 1, window = "1m")
      public String call(String user) {
        return user;
      }
    }
  }

  @Test
  void overloadedMethodsDeriveNamesOfTheirOwnAndCountApart() {
    runner.withBean(Overloaded.class).run(context -> {
      Overloaded bean = context.getBean(Overloaded.class);
      assertThat(bean.place("u")).isEqualTo("one");
      assertThat(bean.place("u", 2)).as("its own policy, its own counter").isEqualTo("two");
      assertThatThrownBy(() -> bean.place("u")).isInstanceOfSatisfying(
          dev.ratelimit.annotation.RateLimitExceededException.class,
          e -> assertThat(e.decision().policy().name()).isEqualTo("Overloaded.place(String)"));
    });
  }

  public static class Overloaded {
    @RateLimited(key = "#p0", limit = 1, window = "1m")
    public String place(String user) {
      return "one";
    }

    @RateLimited(key = "#p0", limit = 1, window = "1m")
    public String place(String user, int count) {
      return "two";
    }
  }

  /** Would fail every call: a cost below 1. */
  static class NegativeCostService {
    @RateLimited(key = "#user", limit = 5, window = "1s", cost = "-1")
    public String call(String user) {
      return user;
    }
  }

  @Test
  void aClassLevelKeyMayNameAVariableSomeMethodsLack() {
    runner.withBean(TenantService.class).run(context -> {
      assertThat(context).hasNotFailed();
      TenantService service = context.getBean(TenantService.class);
      assertThat(service.get("t1")).isEqualTo("t1");
      assertThat(service.refresh()).as("no #tenant: the missing-key bucket").isEqualTo("refreshed");
      assertThatThrownBy(service::refresh).isInstanceOf(dev.ratelimit.annotation.RateLimitExceededException.class);
    });
  }

  /** A class's key: refresh() has no #tenant, and shares the missing-key bucket, as documented. */
  @RateLimited(key = "#tenant", limit = 1, window = "1m")
  public static class TenantService {
    public String get(String tenant) {
      return tenant;
    }

    public String refresh() {
      return "refreshed";
    }
  }

  /** Would deny (or fail) every call: 10 never fits in 5. */
  static class ImpossibleCostService {
    @RateLimited(key = "#user", limit = 5, window = "1s", cost = "10")
    public String call(String user) {
      return user;
    }
  }

  /** The limit headers could not name its policy: an sf-string is printable ASCII. */
  static class NonAsciiNameService {
    @RateLimited(key = "#user", limit = 5, window = "1s", name = "café")
    public String call(String user) {
      return user;
    }
  }

  static class UnknownPolicyService {
    @RateLimited(key = "#user", policy = "nope")
    public String call(String user) {
      return user;
    }
  }

  static class BadExpressionService {
    @RateLimited(key = "#user.", limit = 1, window = "1s")
    public String call(String user) {
      return user;
    }
  }

  static class NoWindowService {
    @RateLimited(key = "#user", limit = 1)
    public String call(String user) {
      return user;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class UnknownPolicy {
    @Bean
    UnknownPolicyService service() {
      return new UnknownPolicyService();
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class BadExpression {
    @Bean
    BadExpressionService service() {
      return new BadExpressionService();
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class NoWindow {
    @Bean
    NoWindowService service() {
      return new NoWindowService();
    }
  }
}

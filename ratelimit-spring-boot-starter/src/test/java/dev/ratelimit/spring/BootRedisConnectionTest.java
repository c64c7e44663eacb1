package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.redis.RedisBackend;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.tck.redis.RedisCluster;
import dev.ratelimit.tck.redis.RedisSentinels;
import dev.ratelimit.tck.redis.RedisServer;
import dev.ratelimit.tck.redis.TestCertificates;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The starter's own Redisson client built from Boot's Redis connection details
 * ({@code spring.data.redis.*}, service connections), each kind of deployment on real servers
 * started by the test: the checks' state is read back from the server it must have landed in.
 */
class BootRedisConnectionTest {
  private final String prefix = "boot-" + UUID.randomUUID().toString().substring(0, 8);
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, DataRedisAutoConfiguration.class,
          SslAutoConfiguration.class))
      .withPropertyValues("ratelimit.redis.key-prefix=" + prefix, "ratelimit.timeout=5s");

  @Test
  void oneServerWithBootsUserPasswordAndDatabase() {
    try (RedisServer redis = RedisServer.builder().user("limiter", "s3cret").start()) {
      runner.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
          "spring.data.redis.username=limiter", "spring.data.redis.password=s3cret",
          "spring.data.redis.database=5").run(context -> {
            assertThat(context.getBean(Backend.class)).isInstanceOf(RedisBackend.class);
            checkTwice(context, "user42");
          });
      assertThat(keys(redis, 5)).as("the checks' key, in database 5").hasSize(1);
      assertThat(keys(redis, 0)).isEmpty();
    }
  }

  @Test
  void aWrongPasswordFailsStartUpNamingTheProperty() {
    try (RedisServer redis = RedisServer.builder().user("limiter", "s3cret").start()) {
      runner.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
          "spring.data.redis.username=limiter", "spring.data.redis.password=hunter2").run(context ->
              assertThat(context).hasFailed().getFailure()
                  .hasStackTraceContaining("spring.data.redis: Redis at " + redis.host() + ":" + redis.port()
                      + " refused the connection (WRONGPASS")
                  .hasStackTraceContaining("spring.data.redis.password")
                  .satisfies(e -> assertThat(stackTrace(e)).doesNotContain("hunter2")));
      runner.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port())
          .run(context -> assertThat(context).as("no credentials where Redis needs them").hasFailed().getFailure()
              .hasStackTraceContaining("refused the connection (NOAUTH"));
      redis.stop(); // down: the application starts, and the failure mode decides until Redis answers
      runner.withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
          "spring.data.redis.username=limiter", "spring.data.redis.password=hunter2", "ratelimit.timeout=300ms")
          .run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(RateLimiter.class).check("k", Policy.parse("1/1m")).isDegraded()).isTrue();
          });
    }
  }

  @Test
  void sentinelWithTheMastersAndTheSentinelsOwnPasswords() {
    try (RedisSentinels group = RedisSentinels.start(1, "data-pw", "sentinel-pw")) {
      List<String> sentinel = List.of("spring.data.redis.sentinel.master=" + RedisSentinels.MASTER_NAME,
          "spring.data.redis.sentinel.nodes=" + String.join(",", group.sentinelNodes()));
      runner.withPropertyValues(sentinel.toArray(String[]::new))
          .withPropertyValues("spring.data.redis.password=data-pw", "spring.data.redis.sentinel.password=sentinel-pw")
          .run(context -> {
            assertThat(context.getBean(Backend.class)).isInstanceOf(RedisBackend.class);
            checkTwice(context, "user42");
          });
      assertThat(keys(group.master())).as("on the master the Sentinel names").hasSize(1);
      group.master().command("WAIT", 1, 5_000);
      assertThat(keys(group.replica())).as("and replicated").hasSize(1);

      runner.withPropertyValues(sentinel.toArray(String[]::new))
          .withPropertyValues("spring.data.redis.password=hunter2", "spring.data.redis.sentinel.password=sentinel-pw")
          .run(context -> assertThat(context).hasFailed().getFailure()
              .hasStackTraceContaining("spring.data.redis: Redis Sentinel master 'ratelimit' at "
                  + group.sentinelNodes().get(0) + " refused the connection")
              .hasStackTraceContaining("spring.data.redis.password")
              .satisfies(e -> assertThat(stackTrace(e)).doesNotContain("hunter2")));
      runner.withPropertyValues(sentinel.toArray(String[]::new))
          .withPropertyValues("spring.data.redis.password=data-pw", "spring.data.redis.sentinel.password=hunter2")
          .run(context -> assertThat(context).hasFailed().getFailure()
              .hasStackTraceContaining("refused the connection")
              .hasStackTraceContaining("spring.data.redis.sentinel.password"));
    }
  }

  @Test
  void clusterNodesSpreadTheKeysOverTheMasters() {
    RedisCluster cluster = RedisCluster.shared(); // 3 masters
    List<String> nodes = cluster.nodes().stream().map(n -> n.host() + ":" + n.port()).toList();
    List<String> users = List.of("user1", "user2", "user3", "user4", "user5", "user6", "user7", "user8");
    runner.withPropertyValues("spring.data.redis.cluster.nodes=" + String.join(",", nodes)).run(context -> {
      for (String user : users) {
        checkTwice(context, user);
      }
      assertThat(context.getBean(RedisBackendConfiguration.OwnRedissonClient.class).client().getConfig()
          .useClusterServers().getScanInterval())
          .as("a slot that moved is followed within a second, not Redisson's five").isEqualTo(1_000);
    });
    Set<Integer> holders = new HashSet<>();
    for (String user : users) {
      RedisServer node = cluster.nodeFor("{" + user + "}"); // the keys' hash tag
      assertThat(keys(node)).as(user + "'s key on the master of its slot")
          .anySatisfy(k -> assertThat(k).contains("{" + user + "}"));
      holders.add(node.port());
    }
    assertThat(holders).as("keys on several masters: one connection would have got MOVED").hasSizeGreaterThan(1);
  }

  /**
   * spring.data.redis.host and port (one server) naming a node of a Cluster of several: start-up
   * fails as for ratelimit.redis.url (RedisClients, the one check), naming what to set instead;
   * a service connection's one server too.
   */
  @Test
  void aNodeOfAClusterOfSeveralAsOneServerFailsStartUp() {
    RedisServer node = RedisCluster.shared().nodes().get(0); // of 3 masters
    String address = node.host() + ":" + node.port();
    runner.withPropertyValues("spring.data.redis.host=" + node.host(), "spring.data.redis.port=" + node.port())
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("spring.data.redis: Redis at " + address + " is a node of a Redis Cluster of 3")
            .hasStackTraceContaining("spring.data.redis.cluster.nodes"));
    runner.withPropertyValues("spring.data.redis.url=" + node.url())
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("spring.data.redis: Redis at " + address + " is a node of a Redis Cluster of 3"));
    runner.withBean(DataRedisConnectionDetails.class, () -> new DataRedisConnectionDetails() {
      @Override
      public Standalone getStandalone() {
        return Standalone.of(node.host(), node.port(), 0);
      }
    }).run(context -> assertThat(context).hasFailed().getFailure()
        .hasStackTraceContaining("Redis at " + address + " is a node of a Redis Cluster of 3"));
  }

  @Test
  void tlsWithTheSslBundlesTrust(@TempDir Path dir) {
    // never skipped: a redis-server without TLS fails here, naming -Dratelimit.redis.binary
    TestCertificates certs = TestCertificates.create(dir);
    try (RedisServer redis = RedisServer.builder().tls(certs).password("s3cret").start()) {
      List<String> server = List.of("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + redis.port(),
          "spring.data.redis.password=s3cret", "spring.data.redis.ssl.enabled=true");
      runner.withPropertyValues(server.toArray(String[]::new))
          .withPropertyValues("spring.data.redis.ssl.bundle=redis",
              "spring.ssl.bundle.pem.redis.truststore.certificate=file:" + certs.caCertificate())
          .run(context -> checkTwice(context, "user42"));
      assertThat(keys(redis)).as("through TLS: the server has no other port").hasSize(1);
      // without the bundle, the JDK's own CAs: the test's certificate is not trusted, nothing is sent
      runner.withPropertyValues(server.toArray(String[]::new)).withPropertyValues("ratelimit.timeout=300ms",
          "ratelimit.redis.key-prefix=" + prefix + "-untrusted").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(RateLimiter.class).check("k", Policy.parse("1/1m")).isDegraded()).isTrue();
          });
      assertThat(keys(redis)).hasSize(1);
      // rediss:// in spring.data.redis.url asks for TLS too (here, with the JDK's CAs)
      runner.withPropertyValues("spring.data.redis.url=rediss://:s3cret@127.0.0.1:" + redis.port(),
          "ratelimit.timeout=300ms").run(context -> assertThat(context.getBean(
              RedisBackendConfiguration.OwnRedissonClient.class).client().getConfig().useSingleServer().getAddress())
              .isEqualTo("rediss://127.0.0.1:" + redis.port()));
    }
  }

  @Test
  void bootsTimeoutsShortenTheLimitersAndSetTheConnectTimeout() {
    RedisServer redis = RedisServer.shared();
    List<String> server = List.of("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port());
    runner.withPropertyValues(server.toArray(String[]::new))
        .withPropertyValues("spring.data.redis.timeout=150ms", "spring.data.redis.connect-timeout=3s").run(context -> {
          RedisBackendConfiguration.OwnRedissonClient own = context.getBean(RedisBackendConfiguration.OwnRedissonClient.class);
          assertThat(own.timeout()).isEqualTo(Duration.ofMillis(150));
          assertThat(own.client().getConfig().useSingleServer().getTimeout()).isEqualTo(150);
          assertThat(own.client().getConfig().useSingleServer().getConnectTimeout()).isEqualTo(3_000);
        });
    runner.withPropertyValues(server.toArray(String[]::new))
        .withPropertyValues("spring.data.redis.timeout=1m", "ratelimit.timeout=250ms").run(context -> {
          RedisBackendConfiguration.OwnRedissonClient own = context.getBean(RedisBackendConfiguration.OwnRedissonClient.class);
          assertThat(own.timeout()).as("never longer than the limiter's default").isEqualTo(Duration.ofMillis(200));
          assertThat(own.client().getConfig().useSingleServer().getConnectTimeout())
              .as("without spring.data.redis.connect-timeout: the call's timeout").isEqualTo(200);
        });
    runner.withPropertyValues(server.toArray(String[]::new))
        .withPropertyValues("spring.data.redis.timeout=100ms", "ratelimit.redis.timeout=300ms").run(context ->
            assertThat(context.getBean(RedisBackendConfiguration.OwnRedissonClient.class).timeout())
                .as("ratelimit.redis.timeout, set, is the limiter's own").isEqualTo(Duration.ofMillis(300)));
  }

  @Test
  void ratelimitRedisUrlAndTheApplicationsRedissonClientComeFirst() {
    try (RedisServer own = RedisServer.start()) {
      // Boot's Redis is down: the limiter's URL is what it uses
      runner.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=1",
          "ratelimit.redis.url=" + own.url()).run(context -> checkTwice(context, "user42"));
      assertThat(keys(own)).hasSize(1);
      own.command("FLUSHALL");
      runner.withUserConfiguration(OwnRedisson.class).withBean("ownUrl", String.class, own::url)
          .withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=1")
          .run(context -> checkTwice(context, "user42")); // Boot's Redis is down: not through our own client
      assertThat(keys(own)).as("through the application's client").hasSize(1);
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnRedisson {
    @Bean(destroyMethod = "shutdown")
    RedissonClient redisson(String ownUrl) {
      Config config = new Config();
      config.useSingleServer().setAddress(ownUrl);
      return Redisson.create(config);
    }
  }

  @Test
  void aServiceConnectionSelectsRedisWithNoProperties() {
    try (RedisServer redis = RedisServer.start()) {
      runner.withBean(DataRedisConnectionDetails.class, () -> new DataRedisConnectionDetails() {
        @Override
        public Standalone getStandalone() {
          return Standalone.of(redis.host(), redis.port(), 1);
        }
      }).run(context -> {
        assertThat(context.getBean(Backend.class)).isInstanceOf(RedisBackend.class);
        checkTwice(context, "user42");
      });
      assertThat(keys(redis, 1)).as("the checks' key, in database 1").hasSize(1);
      assertThat(keys(redis, 0)).isEmpty();
    }
    runner.run(context -> assertThat(context.getBean(Backend.class)).as("Boot's localhost default alone: memory")
        .isNotInstanceOf(RedisBackend.class));
  }

  @Test
  void withoutSpringBootDataRedisBootsPropertiesAreStillRead() {
    try (RedisServer redis = RedisServer.builder().user("limiter", "s3cret").start()) {
      runner.withClassLoader(new FilteredClassLoader("org.springframework.boot.data.redis",
              "org.springframework.data.redis"))
          .withPropertyValues("spring.data.redis.host=" + redis.host(), "spring.data.redis.port=" + redis.port(),
              "spring.data.redis.username=limiter", "spring.data.redis.password=s3cret").run(context -> {
                assertThat(context).doesNotHaveBean("rateLimitRedisConnectionDetails");
                checkTwice(context, "user42");
              });
      assertThat(keys(redis)).hasSize(1);
    }
  }

  @Test
  void aStaticMasterReplicaListIsRefused() {
    runner.withPropertyValues("ratelimit.backend=redis", "spring.data.redis.masterreplica.nodes=127.0.0.1:1")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("spring.data.redis.masterreplica.nodes"));
  }

  /** Two checks of a 1-per-minute policy: the first passes, the second is denied, both by Redis. */
  private static void checkTwice(ApplicationContext context, String key) throws InterruptedException {
    RateLimiter limiter = context.getBean(RateLimiter.class);
    RedisWarmUp.warmUp(limiter);
    Policy p = Policy.parse("1/1m");
    assertThat(limiter.check(key, p).allowed()).isTrue();
    dev.ratelimit.Decision second = limiter.check(key, p);
    assertThat(second.isDegraded()).as("answered by Redis").isFalse();
    assertThat(second.allowed()).isFalse();
  }

  /** The keys of this test's checks on {@code redis}, without the warm-up's. */
  private List<String> keys(RedisServer redis) {
    return keys(redis, 0);
  }

  /** The keys of this test's checks in database {@code db} (a script's SELECT leaves the connection's alone). */
  private List<String> keys(RedisServer redis, int db) {
    Object keys = redis.command("EVAL", "redis.call('SELECT', ARGV[1]) return redis.call('KEYS', ARGV[2])", 0,
        db, prefix + "*");
    return ((List<?>) keys).stream().map(String::valueOf).filter(k -> !k.contains("{warm-up}")).toList();
  }

  private static String stackTrace(Throwable e) {
    java.io.StringWriter out = new java.io.StringWriter();
    e.printStackTrace(new java.io.PrintWriter(out));
    return out.toString();
  }
}

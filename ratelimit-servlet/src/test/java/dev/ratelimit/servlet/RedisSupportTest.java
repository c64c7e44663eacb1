package dev.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.spi.Command;
import dev.ratelimit.spi.Evaluation;
import dev.ratelimit.tck.redis.RedisServer;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The Redis backend of a config file is the Redis backend, not a wrapper with the SPI's defaults. */
class RedisSupportTest {
  @Test
  void theOwningWrapperPassesOnEveryBackendMethod() {
    List<String> defaults = new ArrayList<>();
    for (Method m : Backend.class.getMethods()) {
      if (Modifier.isStatic(m.getModifiers())) {
        continue;
      }
      try {
        Method own = RedisSupport.OwningBackend.class.getMethod(m.getName(), m.getParameterTypes());
        if (own.getDeclaringClass() != RedisSupport.OwningBackend.class) {
          defaults.add(m.getName());
        }
      } catch (NoSuchMethodException e) {
        throw new AssertionError(e);
      }
    }
    assertThat(defaults).as("Backend methods the wrapper leaves to the interface's defaults").isEmpty();
  }

  @Test
  void aConfigFilesRedisLimiterIsRemoteSendsStateAndAnswersHotDenialsLocally() throws Exception {
    RedisServer redis = RedisServer.shared();
    String prefix = "rltest-support-" + UUID.randomUUID().toString().substring(0, 8);
    Policy policy = Policy.of(2, Duration.ofHours(1)).withName("p");
    try (Backend backend = RedisSupport.open(redis.url(), prefix, Duration.ofSeconds(2))) {
      assertThat(backend.isRemote()).isTrue();
      long now = System.currentTimeMillis() * 1_000;
      backend.execute(new Command.Check("k", policy, 2, now));
      Evaluation denied = backend.execute(new Command.Check("k", policy, 1, now));
      assertThat(denied.decision().allowed()).isFalse();
      assertThat(denied.state()).as("the denial's state, for the near-cache").isNotNull();
    }

    try (RateLimiter limiter = RateLimiter.builder().timeout(Duration.ofSeconds(2))
        .backend(RedisSupport.open(redis.url(), prefix + "-l", Duration.ofSeconds(2))).build()) {
      limiter.check("hot", policy, 2);
      assertThat(limiter.check("hot", policy).allowed()).isFalse();
      long before = evalshaCalls(redis);
      for (int i = 0; i < 10; i++) {
        assertThat(limiter.check("hot", policy).allowed()).isFalse();
      }
      assertThat(evalshaCalls(redis) - before).as("denials answered by the near-cache").isZero();
    } finally {
      for (Object key : (List<?>) redis.command("KEYS", prefix + "*")) {
        redis.command("DEL", key);
      }
    }
  }

  @Test
  void aNodeOfAClusterOfSeveralFailsTheConfigurationNotTheRequests() throws Exception {
    // one server's connection to a cluster would send most keys to a node that does not hold them
    String url = dev.ratelimit.tck.redis.RedisCluster.shared().nodes().get(0).url(); // 3 masters
    assertThatThrownBy(() -> RedisSupport.open(url, "rltest-cluster", Duration.ofSeconds(2)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ratelimit.redis.url").hasMessageContaining("is a node of a Redis Cluster of 3 nodes")
        .hasMessageContaining("RateLimitConfig.filterBuilder");
    // a cluster of one node holds every key: one connection serves it
    try (dev.ratelimit.tck.redis.RedisCluster single = dev.ratelimit.tck.redis.RedisCluster.start(1);
        Backend backend = RedisSupport.open(single.nodes().get(0).url(), "rltest-cluster1", Duration.ofSeconds(2))) {
      Policy p = Policy.of(1, Duration.ofMinutes(1)).withName("p");
      assertThat(backend.execute(new Command.Check("k", p, 1, System.currentTimeMillis() * 1_000)).decision().allowed())
          .isTrue();
    }
  }

  @Test
  void aRedisThatRefusesTheUrlsCredentialsOrDatabaseFailsTheConfigurationNotTheRequests() {
    try (RedisServer redis = RedisServer.start()) { // its own server: the test adds a user
      redis.command("ACL", "SETUSER", "limiter", "on", ">s3cret", "~*", "+@all");
      String at = redis.host() + ":" + redis.port();
      assertThatThrownBy(() -> RedisSupport.open("redis://limiter:hunter2@" + at, "p", Duration.ofSeconds(2)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("ratelimit.redis.url").hasMessageContaining("WRONGPASS")
          .hasMessageNotContaining("hunter2");
      assertThatThrownBy(() -> RedisSupport.open("redis://" + at + "/99", "p", Duration.ofSeconds(2)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("ratelimit.redis.url").hasMessageContaining("DB index is out of range");
      redis.command("ACL", "SETUSER", "default", "off");
      assertThatThrownBy(() -> RedisSupport.open("redis://" + at, "p", Duration.ofSeconds(2)))
          .as("no credentials where Redis needs them").isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("ratelimit.redis.url").hasMessageContaining("NOAUTH");
      try (Backend backend = RedisSupport.open("redis://limiter:s3cret@" + at, "p", Duration.ofSeconds(2))) {
        assertThat(backend.execute(new Command.Check("k", Policy.parse("1/1m"), 1, System.currentTimeMillis() * 1_000))
            .decision().allowed()).isTrue();
      }
    }
  }

  @Test
  void theFilesRedisClientWaitsForAConnectionAsLongAsForAReplyAndNeverRetries() {
    try (RedisServer redis = RedisServer.start()) {
      redis.stop(); // down: the configuration is still taken, and the client connects later
      try (Backend backend = RedisSupport.open(redis.url(), "p", Duration.ofMillis(700))) {
        org.redisson.config.SingleServerConfig server =
            ((RedisSupport.OwningBackend) backend).client().getConfig().useSingleServer();
        assertThat(server.getConnectTimeout()).isEqualTo(700);
        assertThat(server.getTimeout()).isEqualTo(700);
        assertThat(server.getRetryAttempts()).isZero();
      }
    }
  }

  @Test
  void aPasswordForARedisWithoutOneIsRefusedToo() {
    try (RedisServer redis = RedisServer.start()) {
      assertThatThrownBy(() -> RedisSupport.open("redis://:hunter2@" + redis.host() + ":" + redis.port(), "p",
          Duration.ofSeconds(2))).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("ratelimit.redis.url").hasMessageNotContaining("hunter2");
    }
  }

  @Test
  void theFilesLimiterWaitsAsLongAsTheFileSays(@TempDir Path dir) throws Exception {
    try (RedisServer redis = RedisServer.start()) { // its own server: the test puts it to sleep
      Path file = Files.writeString(dir.resolve("wait.properties"), """
          ratelimit.backend=redis
          ratelimit.redis.url=%s
          ratelimit.redis.timeout=5s
          ratelimit.timeout=5s
          ratelimit.failure-mode=FAIL_CLOSED
          ratelimit.rules[0].name=api
          ratelimit.rules[0].paths=/**
          ratelimit.rules[0].policies[0].limit=10/1m
          """.formatted(redis.url()));
      try (RateLimiter limiter = RateLimitConfig.load(file.toString()).newLimiter()) {
        Policy policy = Policy.of(10, Duration.ofMinutes(1));
        assertThat(limiter.check("warm", policy).isDegraded()).as("connected").isFalse();
        CompletableFuture<Object> sleep = CompletableFuture.supplyAsync(() -> redis.command("DEBUG", "SLEEP", "1"));
        Thread.sleep(200); // the server is asleep for another 800 ms: longer than the limiter's default 250
        Decision during = limiter.check("k", policy);
        sleep.get(10, TimeUnit.SECONDS);
        assertThat(during.isDegraded()).as("answered by Redis, not the failure mode").isFalse();
        assertThat(during.remaining()).isEqualTo(9);
      }
    }
  }

  private static long evalshaCalls(RedisServer redis) {
    Matcher m = Pattern.compile("cmdstat_evalsha:calls=(\\d+)").matcher(redis.info("commandstats"));
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }
}

package dev.ratelimit.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.spi.Evaluation;
import dev.ratelimit.tck.redis.RedisServer;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

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
      backend.check("k", policy, 2, now);
      Evaluation denied = backend.evaluate("k", policy, 1, now);
      assertThat(denied.decision().allowed()).isFalse();
      assertThat(denied.state()).as("the denial's state, for the near-cache").isNotNull();
    }

    try (RateLimiter limiter = RateLimiter.builder()
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
      try (Backend backend = RedisSupport.open("redis://limiter:s3cret@" + at, "p", Duration.ofSeconds(2))) {
        assertThat(backend.check("k", Policy.parse("1/1m"), 1, System.currentTimeMillis() * 1_000).allowed()).isTrue();
      }
    }
  }

  private static long evalshaCalls(RedisServer redis) {
    Matcher m = Pattern.compile("cmdstat_evalsha:calls=(\\d+)").matcher(redis.info("commandstats"));
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }
}

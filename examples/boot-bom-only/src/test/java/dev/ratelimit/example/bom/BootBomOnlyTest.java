package dev.ratelimit.example.bom;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Decision;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.redis.RedisBackend;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.spring.PolicyRegistry;
import dev.ratelimit.tck.redis.RedisServer;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The starter as an application that imports only Spring Boot's BOM resolves it: the Netty and
 * byte-buddy Boot manages (not the newer ones the project's build pins for Redisson), checking
 * against a real Redis.
 */
class BootBomOnlyTest {

  /** The version {@code property} of Spring Boot's BOM, read from the local repository. */
  private static String managedByBoot(String property) throws IOException {
    String boot = System.getProperty("spring-boot.version");
    Path bom = Path.of(System.getProperty("maven.repo.local"), "org/springframework/boot/spring-boot-dependencies",
        boot, "spring-boot-dependencies-" + boot + ".pom");
    Matcher m = Pattern.compile("<" + Pattern.quote(property) + ">([^<]+)</").matcher(Files.readString(bom));
    assertThat(m.find()).as(property + " in " + bom).isTrue();
    return m.group(1);
  }

  /** The version of the jar that holds {@code groupId:artifactId}'s Maven descriptor on the class path. */
  private static String onClassPath(String groupId, String artifactId) throws IOException {
    String descriptor = "META-INF/maven/" + groupId + "/" + artifactId + "/pom.properties";
    try (InputStream in = BootBomOnlyTest.class.getClassLoader().getResourceAsStream(descriptor)) {
      assertThat(in).as(descriptor).isNotNull();
      Properties properties = new Properties();
      properties.load(in);
      return properties.getProperty("version");
    }
  }

  @Test
  void theClassPathHasTheVersionsBootManages() throws IOException {
    String netty = io.netty.util.Version.identify().get("netty-common").artifactVersion();
    assertThat(netty).isEqualTo(managedByBoot("netty.version"));
    assertThat(io.netty.util.Version.identify().get("netty-handler").artifactVersion()).isEqualTo(netty);
    assertThat(onClassPath("net.bytebuddy", "byte-buddy")).isEqualTo(managedByBoot("byte-buddy.version"));
  }

  @Test
  void thisModuleIsOnTheProjectsBootVersion() throws IOException {
    String parent = Files.readString(Path.of("../../pom.xml"), StandardCharsets.UTF_8);
    assertThat(parent).contains("<spring-boot.version>" + System.getProperty("spring-boot.version") + "</spring-boot.version>");
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {}

  @Test
  void theStarterLimitsOnRedis() {
    try (RedisServer redis = RedisServer.start();
        ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
            .web(WebApplicationType.NONE)
            .properties("ratelimit.redis.url=" + redis.url(), "ratelimit.timeout=5s", "ratelimit.redis.timeout=5s",
                "ratelimit.policies.api.limit=2", "ratelimit.policies.api.window=1m")
            .run()) {
      assertThat(context.getBean(Backend.class)).isInstanceOf(RedisBackend.class);
      RateLimiter limiter = context.getBean(RateLimiter.class);
      var api = context.getBean(PolicyRegistry.class).get("api", "test");
      Decision first = limiter.check("user:1", api);
      Decision second = limiter.check("user:1", api);
      Decision third = limiter.check("user:1", api);
      assertThat(first.isDegraded()).as("Redis answered: %s", first).isFalse();
      assertThat(first.allowed()).isTrue();
      assertThat(second.allowed()).isTrue();
      assertThat(third.allowed()).isFalse();
      assertThat(third.isDegraded()).isFalse();
      assertThat(third.retryAfter()).isPositive();
      assertThat(limiter.check("user:2", api).allowed()).as("another key has its own limit").isTrue();
    }
  }
}

package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * What the build writes for tools and for Boot's start-up: the auto-configurations' conditions
 * (spring-boot-autoconfigure-processor), and the configuration metadata with the hand-written
 * hints merged in (additional-spring-configuration-metadata.json).
 */
class ConfigurationMetadataTest {
  private static final String IMPORTS =
      "META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports";

  @Test
  void everyAutoConfigurationHasItsConditionsInTheAutoConfigureMetadata() throws IOException {
    Properties metadata = ours("META-INF/spring-autoconfigure-metadata.properties");
    List<String> autoConfigurations = new ArrayList<>();
    try (InputStream in = resource(IMPORTS).openStream()) {
      new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().map(String::strip)
          .filter(line -> !line.isEmpty() && !line.startsWith("#")).forEach(autoConfigurations::add);
    }
    assertThat(autoConfigurations).hasSizeGreaterThanOrEqualTo(4);
    for (String name : autoConfigurations) {
      assertThat(metadata).as(name).containsKey(name);
    }
    // what lets Boot skip a configuration before loading its class
    assertThat(metadata).containsEntry(RateLimitMetricsAutoConfiguration.class.getName() + ".ConditionalOnClass",
        "io.micrometer.core.instrument.MeterRegistry");
    assertThat(metadata).containsEntry(RateLimitMetricsAutoConfiguration.class.getName() + ".ConditionalOnBean",
        "io.micrometer.core.instrument.MeterRegistry");
    assertThat(metadata).containsEntry(RedisBackendConfiguration.class.getName() + ".ConditionalOnClass",
        "dev.ratelimit.redis.RedisBackend,org.redisson.api.RedissonClient");
    assertThat(metadata.getProperty(RateLimitAutoConfiguration.class.getName() + ".AutoConfigureAfter"))
        .contains("org.redisson.spring.starter.RedissonAutoConfigurationV4");
    assertThat(metadata).containsEntry(RateLimitHealthAutoConfiguration.class.getName() + ".AutoConfigureAfter",
        RateLimitAutoConfiguration.class.getName());
  }

  @Test
  void theMetadataHasTheHandWrittenHintsAndDurations() throws IOException {
    String json;
    try (InputStream in = resource("META-INF/spring-configuration-metadata.json").openStream()) {
      json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    List<String> hints = JsonPath.read(json, "$.hints[*].name");
    assertThat(hints).contains("ratelimit.policies.keys", "ratelimit.shadow-policies", "ratelimit.trusted-proxies",
        "ratelimit.denied-response.content-type", "ratelimit.denied-response.headers.keys", "ratelimit.redis.url");
    List<String> proxies = JsonPath.read(json, "$.hints[?(@.name == 'ratelimit.trusted-proxies')].values[*].value");
    assertThat(proxies).contains("10.0.0.0/8", "::1/128");
    List<Map<String, Object>> policies = JsonPath.read(json, "$.properties[?(@.name == 'ratelimit.policies')]");
    assertThat(policies).singleElement().extracting(p -> p.get("type"))
        .isEqualTo("java.util.Map<java.lang.String,dev.ratelimit.spring.RateLimitProperties$PolicyProperties>");
    for (String duration : List.of("ratelimit.timeout", "ratelimit.fail-closed-retry-after",
        "ratelimit.circuit-breaker.cool-down", "ratelimit.redis.timeout")) {
      List<String> types = JsonPath.read(json, "$.properties[?(@.name == '" + duration + "')].type");
      assertThat(types).as(duration).containsExactly("java.time.Duration");
    }
  }

  @Test
  void aPolicysWindowIsADurationAsIdesSeeIt() throws NoSuchMethodException {
    // IDEs validate a map's values by their class: the window is typed, not text
    assertThat(RateLimitProperties.PolicyProperties.class.getMethod("getWindow").getReturnType())
        .isEqualTo(java.time.Duration.class);
  }

  /** This module's copy of {@code name}, not another jar's. */
  private static URL resource(String name) throws IOException {
    for (URL url : Collections.list(ConfigurationMetadataTest.class.getClassLoader().getResources(name))) {
      if (url.getPath().contains("ratelimit-spring-boot-starter/target/classes")) {
        return url;
      }
    }
    throw new AssertionError(name + " is not in target/classes: the build did not write it");
  }

  private static Properties ours(String name) throws IOException {
    Properties properties = new Properties();
    try (InputStream in = resource(name).openStream()) {
      properties.load(in);
    }
    return properties;
  }
}

package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.tck.redis.RedisServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Readiness of a real started application (Kubernetes' probe, {@code /actuator/health/readiness})
 * against a Redis the test stops and starts: not ready while the Redis backend has never answered
 * (a cold instance's every check would be decided by the failure mode), ready once it has and the
 * scripts are loaded, or once {@code ratelimit.readiness.max-wait} is over; a later outage does not
 * take readiness away.
 */
class ReadinessTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private RedisServer redis;

  @BeforeEach
  void startRedis() {
    redis = RedisServer.start();
  }

  @AfterEach
  void stopRedis() {
    redis.close();
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {}

  private ConfigurableApplicationContext start(String... more) {
    return new SpringApplicationBuilder(App.class).properties("server.port=0",
            "management.endpoint.health.probes.enabled=true",
            "ratelimit.backend=redis", "ratelimit.redis.url=" + redis.url(),
            "ratelimit.redis.key-prefix=readiness-" + System.nanoTime(), "ratelimit.readiness.enabled=true")
        .properties(more).run();
  }

  private static int readiness(ConfigurableApplicationContext app) throws Exception {
    int port = ((WebServerApplicationContext) app).getWebServer().getPort();
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health/readiness"))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).statusCode();
  }

  /** The readiness status once it is {@code expected}, or the last one seen within 10 s. */
  private static int awaitReadiness(ConfigurableApplicationContext app, int expected) throws Exception {
    int status = readiness(app);
    for (long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        status != expected && System.nanoTime() - deadline < 0; status = readiness(app)) {
      Thread.sleep(50);
    }
    return status;
  }

  @Test
  @Timeout(60)
  void notReadyUntilRedisHasAnsweredThenReadyAndAnOutageLaterKeepsItReady() throws Exception {
    redis.stop();
    try (ConfigurableApplicationContext app = start()) {
      assertThat(readiness(app)).as("Redis never answered").isEqualTo(503);
      Thread.sleep(300); // a few warm-up attempts fail (real time is the point)
      assertThat(readiness(app)).as("still not ready").isEqualTo(503);

      redis.restart(); // same port: Redis answers now
      assertThat(awaitReadiness(app, 200)).as("ready once Redis answered").isEqualTo(200);
      RateLimiter limiter = app.getBean(RateLimiter.class);
      assertThat(limiter.check("k", Policy.parse("10/1m")).isDegraded()).as("Redis decides").isFalse();

      redis.stop();
      assertThat(readiness(app)).as("a later outage is the failure mode's, not readiness's").isEqualTo(200);
    }
  }

  /** A fleet restarted during a Redis outage serves again after max-wait, its failure mode deciding. */
  @Test
  @Timeout(60)
  void aStartUpOutageHoldsReadinessForMaxWaitAtMost() throws Exception {
    redis.stop();
    try (ConfigurableApplicationContext app = start("ratelimit.readiness.max-wait=4s")) {
      assertThat(readiness(app)).as("waiting for Redis").isEqualTo(503);
      assertThat(awaitReadiness(app, 200)).as("ready once max-wait is over").isEqualTo(200);
      RateLimiter limiter = app.getBean(RateLimiter.class);
      assertThat(limiter.check("k", Policy.parse("10/1m")).isDegraded()).as("the failure mode decides").isTrue();

      redis.restart();
      boolean redisDecides = false;
      for (long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
          !redisDecides && System.nanoTime() - deadline < 0; Thread.sleep(100)) {
        redisDecides = !limiter.check("k", Policy.parse("10/1m")).isDegraded();
      }
      assertThat(redisDecides).as("Redis decides once it answers").isTrue();
      assertThat(readiness(app)).isEqualTo(200);
    }
  }

  @Test
  void aMaxWaitThatIsNotPositiveFailsStartUpNamingTheProperty() {
    assertThatThrownBy(() -> start("ratelimit.readiness.max-wait=0s").close())
        .hasStackTraceContaining("ratelimit.readiness.max-wait must be positive, was PT0S");
  }

  @Test
  @Timeout(60)
  void aLiveRedisMakesItReady() throws Exception {
    try (ConfigurableApplicationContext app = start()) {
      assertThat(awaitReadiness(app, 200)).isEqualTo(200);
    }
  }

  @Test
  @Timeout(60)
  void readinessCanIgnoreTheBackend() throws Exception {
    redis.stop();
    try (ConfigurableApplicationContext app = start("ratelimit.readiness.enabled=false")) {
      assertThat(readiness(app)).isEqualTo(200);
    }
  }

  /** Boot's rule for external systems: Redis is not part of readiness unless the user opts in. */
  @Test
  @Timeout(60)
  void byDefaultAFailOpenApplicationIsReadyWhileRedisIsDown() throws Exception {
    redis.stop();
    try (ConfigurableApplicationContext app = new SpringApplicationBuilder(App.class).properties("server.port=0",
            "management.endpoint.health.probes.enabled=true", "ratelimit.failure-mode=fail-open",
            "ratelimit.backend=redis", "ratelimit.redis.url=" + redis.url(),
            "ratelimit.redis.key-prefix=readiness-" + System.nanoTime()).run()) {
      assertThat(readiness(app)).isEqualTo(200);
    }
  }
}

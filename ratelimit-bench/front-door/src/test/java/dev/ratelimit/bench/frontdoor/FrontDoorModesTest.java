package dev.ratelimit.bench.frontdoor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.redis.RedisBackend;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.tck.redis.RedisServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.availability.ApplicationAvailability;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Each mode of the benchmark's application puts the limiter it names in front of {@code /work},
 * over real sockets: the 101st request of a user is a 429 with that limiter's headers (none in the
 * no-limiter mode, which never limits), another user is still served, and the state lives where
 * the mode says (Redis keys under the row's prefix, or none). The policy is 100 a day here, so that
 * no token comes back while the test runs (at 100 a minute one does every 600 ms).
 */
class FrontDoorModesTest {
  private static final String POLICY = "100/1d";
  private static RedisServer redis;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @BeforeAll
  static void startRedis() {
    redis = RedisServer.start();
  }

  @AfterAll
  static void stopRedis() {
    if (redis != null) {
      redis.close();
    }
  }

  @ParameterizedTest
  @EnumSource(Mode.class)
  void theModesLimiterDeniesThe101stRequestOfAUser(Mode mode) throws Exception {
    String prefix = "test-" + mode.id();
    try (ConfigurableApplicationContext app = FrontDoorApplication.start("--server.port=0",
        "--bench.mode=" + mode.id(), "--bench.policy=" + POLICY, "--bench.redis-url=" + redis.url(),
        "--bench.key-prefix=" + prefix)) {
      awaitReady(app);
      int port = ((WebServerApplicationContext) app).getWebServer().getPort();

      HttpResponse<String> first = get(port, "alice");
      assertThat(first.statusCode()).isEqualTo(200);
      assertThat(first.body()).isEqualTo("ok");
      allowedHeaders(mode, first);
      for (int i = 2; i <= 100; i++) {
        assertThat(get(port, "alice").statusCode()).as("request %d", i).isEqualTo(200);
      }
      HttpResponse<String> hundredAndFirst = get(port, "alice");
      if (mode == Mode.NONE) {
        assertThat(hundredAndFirst.statusCode()).isEqualTo(200);
        assertThat(get(port, "alice").statusCode()).isEqualTo(200);
      } else {
        assertThat(hundredAndFirst.statusCode()).isEqualTo(429);
        deniedHeaders(mode, hundredAndFirst);
      }
      assertThat(get(port, "bob").statusCode()).isEqualTo(200);

      frontDoor(mode, app);
      Object keys = redis.command("KEYS", "*" + prefix + "*");
      if (mode.redis()) {
        assertThat((List<?>) keys).as("Redis keys under %s", prefix).isNotEmpty();
      } else {
        assertThat((List<?>) keys).as("Redis keys under %s", prefix).isEmpty();
      }
    }
  }

  @Test
  void anUnknownModeNamesThePropertyAndEveryMode() {
    assertThatThrownBy(() -> FrontDoorApplication.start("--server.port=0", "--bench.mode=filter"))
        .hasMessageContaining("bench.mode must be one of none, filter-memory, annotation-memory, filter-redis, "
            + "annotation-redis, bucket4j-memory, bucket4j-redis; was 'filter'");
  }

  @Test
  void aRedisModeWithoutAUrlNamesTheProperty() {
    assertThatThrownBy(() -> FrontDoorApplication.start("--server.port=0", "--bench.mode=filter-redis"))
        .hasMessageContaining("bench.mode=filter-redis needs bench.redis-url");
  }

  /** Which front door is there: our filter or the annotated method, on which backend, or Bucket4j's filter. */
  private static void frontDoor(Mode mode, ConfigurableApplicationContext app) {
    assertThat(app.containsBean("rateLimitFilter")).as("our filter").isEqualTo(mode.limiter() == Mode.Limiter.FILTER);
    assertThat(app.getBeanNamesForType(RateLimitedWorkController.class)).as("the @RateLimited controller")
        .hasSize(mode.limiter() == Mode.Limiter.ANNOTATION ? 1 : 0);
    assertThat(app.containsBean("bucket4jFilter")).as("the Bucket4j filter")
        .isEqualTo(mode.limiter() == Mode.Limiter.BUCKET4J);
    boolean ours = mode.limiter() == Mode.Limiter.FILTER || mode.limiter() == Mode.Limiter.ANNOTATION;
    if (ours) {
      assertThat(app.getBean(Backend.class)).isInstanceOf(mode.redis() ? RedisBackend.class : InMemoryBackend.class);
    } else {
      assertThat(app.getBeanNamesForType(Backend.class)).isEmpty();
    }
  }

  private static void allowedHeaders(Mode mode, HttpResponse<String> response) {
    switch (mode.limiter()) {
      case NONE -> assertThat(response.headers().map().keySet())
          .noneMatch(name -> name.toLowerCase().contains("ratelimit") || name.toLowerCase().contains("rate-limit"));
      case FILTER, ANNOTATION -> {
        assertThat(response.headers().firstValue("RateLimit-Policy")).hasValue("\"per-user\";q=100;w=86400");
        assertThat(response.headers().firstValue("RateLimit")).hasValueSatisfying(v -> assertThat(v).contains("r=99"));
      }
      case BUCKET4J -> assertThat(response.headers().firstValue("X-Rate-Limit-Remaining")).hasValue("99");
    }
  }

  private static void deniedHeaders(Mode mode, HttpResponse<String> response) {
    switch (mode.limiter()) {
      case FILTER, ANNOTATION -> {
        assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(
            v -> assertThat(v).startsWith("application/problem+json"));
        assertThat(response.headers().firstValue("Retry-After").map(Long::parseLong)).hasValueSatisfying(
            seconds -> assertThat(seconds).isBetween(860L, 864L));
        assertThat(response.headers().firstValue("RateLimit")).hasValueSatisfying(v -> assertThat(v).contains("r=0"));
        assertThat(response.body()).contains("per-user");
      }
      case BUCKET4J -> {
        assertThat(response.headers().firstValue("X-Rate-Limit-Retry-After-Seconds").map(Long::parseLong))
            .hasValueSatisfying(seconds -> assertThat(seconds).isBetween(860L, 864L));
        assertThat(response.body()).isEqualTo(Bucket4jStarterFilter.BODY);
      }
      case NONE -> throw new AssertionError("the no-limiter mode denied");
    }
  }

  /** On Redis, our starter is not ready until the scripts are loaded; until then the failure mode would decide. */
  private static void awaitReady(ConfigurableApplicationContext app) throws InterruptedException {
    ApplicationAvailability availability = app.getBean(ApplicationAvailability.class);
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (availability.getReadinessState() != ReadinessState.ACCEPTING_TRAFFIC) {
      assertThat(System.nanoTime()).as("ready within 20 s").isLessThan(deadline);
      Thread.sleep(20);
    }
  }

  private HttpResponse<String> get(int port, String user) throws IOException, InterruptedException {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/work?user=" + user))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
  }
}

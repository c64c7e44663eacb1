package dev.ratelimit.service;

import static dev.ratelimit.service.envoy.RlsClient.d;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.service.envoy.GrpcServer;
import dev.ratelimit.service.envoy.RlsClient;
import dev.ratelimit.tck.redis.RedisServer;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Two service instances on one Redis that this test starts (and stops), each serving Envoy's
 * protocol over real gRPC: one limit shared exactly, a request's descriptors all or nothing, and
 * the failure modes when Redis is gone.
 */
class EnvoyOnRedisTest {

  private static ConfigurableApplicationContext instance(RedisServer redis, String prefix, String failureMode) {
    Map<String, String> env = new HashMap<>();
    env.put("RATELIMIT_REDIS_URL", redis.url());
    env.put("RATELIMIT_REDIS_KEY_PREFIX", prefix);
    env.put("RATELIMIT_FAILURE_MODE", failureMode);
    // a busy machine must not turn a slow Redis answer into the failure mode's (the default is
    // 250 ms): here only a stopped Redis may; it refuses at once, whatever the timeout
    env.put("RATELIMIT_TIMEOUT", "5s");
    env.put("RATELIMIT_REDIS_TIMEOUT", "5s");
    env.put("RATELIMIT_SERVICE_GRPC_ENABLED", "true");
    env.put("RATELIMIT_SERVICE_GRPC_PORT", "0");
    env.put("RATELIMIT_SERVICE_GRPC_CONFIG", "classpath:envoy/exact.yaml");
    return ServiceInstances.start(env);
  }

  private static int grpcPort(ConfigurableApplicationContext context) {
    return context.getBean(GrpcServer.class).port();
  }

  @Test
  void twoInstancesShareOneLimitExactlyAndTheFailureModesDecideWithoutRedis() throws Exception {
    String prefix = "envoy-" + System.nanoTime();
    try (RedisServer redis = RedisServer.start();
        ConfigurableApplicationContext open = instance(redis, prefix, "FAIL_OPEN");
        ConfigurableApplicationContext closed = instance(redis, prefix, "FAIL_CLOSED");
        RlsClient first = new RlsClient(grpcPort(open));
        RlsClient second = new RlsClient(grpcPort(closed))) {
      String client = "c-" + System.nanoTime();
      ExecutorService callers = Executors.newFixedThreadPool(8);
      try {
        List<Future<RateLimitResponse>> answers = new ArrayList<>();
        for (int i = 0; i < 160; i++) { // 100 a day, across both instances, 8 callers at once
          RlsClient rls = i % 2 == 0 ? first : second;
          answers.add(callers.submit(() -> rls.check("exact", d("client", client))));
        }
        int ok = 0;
        for (Future<RateLimitResponse> answer : answers) {
          RateLimitResponse response = answer.get();
          assertThat(response.getStatuses(0).hasDurationUntilReset()).as("decided by Redis").isTrue();
          ok += response.getOverallCode() == Code.OK ? 1 : 0;
        }
        assertThat(ok).isEqualTo(100);
      } finally {
        callers.shutdownNow();
      }
      assertThat(first.check("exact", d("client", client)).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
      assertThat(second.check("exact", d("client", client)).getOverallCode()).isEqualTo(Code.OVER_LIMIT);

      // two descriptors, all or nothing across both instances: 10 pass (gold's limit), and the 20
      // refused charge nothing on the client's own limit of 100
      String gold = "g-" + System.nanoTime();
      callers = Executors.newFixedThreadPool(8);
      try {
        List<Future<RateLimitResponse>> answers = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
          RlsClient rls = i % 2 == 0 ? first : second;
          answers.add(callers.submit(() -> rls.check("exact", d("client", gold), d("tier", "gold", "client", gold))));
        }
        int ok = 0;
        for (Future<RateLimitResponse> answer : answers) {
          ok += answer.get().getOverallCode() == Code.OK ? 1 : 0;
        }
        assertThat(ok).isEqualTo(10);
      } finally {
        callers.shutdownNow();
      }
      assertThat(second.check("exact", d("client", gold)).getStatuses(0).getLimitRemaining())
          .as("only the 10 admitted requests and this one were counted").isEqualTo(100 - 11);

      redis.stop();
      String fresh = "c-" + System.nanoTime();
      RateLimitResponse allowed = first.check("exact", d("client", fresh));
      assertThat(allowed.getOverallCode()).isEqualTo(Code.OK);
      assertThat(allowed.getStatuses(0).hasDurationUntilReset()).as("degraded: no invented numbers").isFalse();
      RateLimitResponse denied = second.check("exact", d("client", fresh));
      assertThat(denied.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
      assertThat(denied.getStatuses(0).getCode()).isEqualTo(Code.OVER_LIMIT);
      // a key this instance saw refused stays refused until its wait is over (the near-cache), Redis or not
      assertThat(first.check("exact", d("client", client)).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
      assertThat(first.health("")).isEqualTo(io.grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING);
    }
  }
}

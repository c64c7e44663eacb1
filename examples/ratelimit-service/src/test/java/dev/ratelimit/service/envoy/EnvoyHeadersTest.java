package dev.ratelimit.service.envoy;

import static dev.ratelimit.service.envoy.RlsClient.d;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.ManualClock;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;

/** {@code response-headers}: the IETF limit headers in response_headers_to_add, as the HTTP API writes them. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "ratelimit-service.grpc.enabled=true",
    "ratelimit-service.grpc.port=0",
    "ratelimit-service.grpc.response-headers=true",
    "ratelimit-service.grpc.config=classpath:envoy/service-extensions.yaml,classpath:envoy/readme-example-6.yaml"})
class EnvoyHeadersTest {

  @TestConfiguration
  static class Clock {
    @Bean
    ManualClock clock() {
      return ManualClock.at(EnvoyEndpointTest.START.plusSeconds(20));
    }
  }

  @Autowired
  GrpcServer server;
  RlsClient rls;

  @BeforeEach
  void connect() {
    rls = new RlsClient(server.port());
  }

  @AfterEach
  void disconnect() {
    rls.close();
  }

  private static Map<String, String> headers(RateLimitResponse response) {
    Map<String, String> headers = new LinkedHashMap<>();
    for (HeaderValue header : response.getResponseHeadersToAddList()) {
      headers.put(header.getKey(), header.getValue());
    }
    return headers;
  }

  @Test
  void allowedAnswersCarryTheLimitHeadersOfEveryEnforcedDescriptor() {
    String key = "h-" + System.nanoTime();
    RateLimitResponse ok = rls.check("api", 2, d("big", key), d("files", "files/" + key));
    assertThat(ok.getOverallCode()).isEqualTo(Code.OK);
    // 5 a minute, 40 s of the window left; 2 an hour, 3,580 s left
    assertThat(headers(ok)).containsExactly(
        Map.entry("RateLimit-Policy", "\"api.big\";q=5;w=60, \"api.files_files/*\";q=2;w=3600"),
        Map.entry("RateLimit", "\"api.big\";r=3;t=40, \"api.files_files/*\";r=0;t=3580"));
  }

  @Test
  void overTheLimitAddsRetryAfterAndNoWaitBeyondIt() {
    String key = "h-" + System.nanoTime();
    rls.check("api", 5, d("big", key));
    RateLimitResponse over = rls.check("api", d("big", key));
    assertThat(over.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(headers(over)).containsExactly(
        Map.entry("RateLimit-Policy", "\"api.big\";q=5;w=60"),
        Map.entry("RateLimit", "\"api.big\";r=0;t=40"),
        Map.entry("Retry-After", "40"));
  }

  @Test
  void shadowRulesAndUnmatchedDescriptorsAddNoHeaders() {
    String service = "s-" + System.nanoTime();
    for (int i = 0; i < 12; i++) {
      RateLimitResponse shadow = rls.check("example6", d("service", service, "user", "user-a"), d("none", "x"));
      assertThat(shadow.getOverallCode()).isEqualTo(Code.OK);
      assertThat(shadow.getResponseHeadersToAddList()).isEmpty();
    }
  }
}

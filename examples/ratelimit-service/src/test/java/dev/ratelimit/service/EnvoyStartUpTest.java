package dev.ratelimit.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.service.envoy.GrpcServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;

/** The Envoy endpoint is off by default, and a configuration that could never work fails start-up saying why. */
class EnvoyStartUpTest {

  @Test
  void offByDefault() {
    try (ConfigurableApplicationContext service = ServiceInstances.start(Map.of())) {
      assertThat(service.getBeanNamesForType(GrpcServer.class)).isEmpty();
    }
  }

  @Test
  void onWithoutRulesFailsNamingTheProperty() {
    assertThatThrownBy(() -> ServiceInstances.start(Map.of("RATELIMIT_SERVICE_GRPC_ENABLED", "true")).close())
        .rootCause().hasMessageContaining("ratelimit-service.grpc.config (RATELIMIT_SERVICE_GRPC_CONFIG) is empty");
    assertThatThrownBy(() -> ServiceInstances.start(Map.of("RATELIMIT_SERVICE_GRPC_ENABLED", "true",
        "RATELIMIT_SERVICE_GRPC_CONFIG", "file:/no/such/dir/rules.yaml")).close())
        .rootCause().hasMessageContaining("'file:/no/such/dir/rules.yaml' names no file");
  }

  @Test
  void aBadRuleFileFailsNamingTheFileAndTheDescriptor(@TempDir Path dir) throws Exception {
    Path rules = Files.writeString(dir.resolve("rules.yaml"), """
        domain: edge
        descriptors:
          - key: remote_address
            rate_limit: {unit: fortnight, requests_per_unit: 10}
        """);
    assertThatThrownBy(() -> ServiceInstances.start(Map.of("RATELIMIT_SERVICE_GRPC_ENABLED", "true",
        "RATELIMIT_SERVICE_GRPC_PORT", "0", "RATELIMIT_SERVICE_GRPC_CONFIG", "file:" + rules)).close())
        .rootCause().hasMessageContaining("rules.yaml").hasMessageContaining(
            "edge.remote_address.rate_limit.unit: invalid 'fortnight', one of second, minute, hour, day, week, month, year");
  }
}

package dev.ratelimit.service.envoy;

import static dev.ratelimit.service.envoy.RlsClient.d;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.tck.docs.DocPage;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The rule file of docs/envoy.md loads and matches as the page says. */
class EnvoyDocsTest {

  @Test
  void thePagesRuleFileLoadsAndMatchesAsDescribed() {
    String yaml = DocPage.read("docs/envoy.md").block("yaml", "\ndescriptors:");
    EnvoyConfig config = EnvoyConfig.parse(Map.of("docs/envoy.md", yaml));

    Rule perAddress = config.match("edge_proxy_per_ip", d("remote_address", "10.0.0.1")).rule();
    assertThat(perAddress.policy().algorithm()).isEqualTo(Algorithm.FIXED_WINDOW);
    assertThat(perAddress.policy().limit()).isEqualTo(10);
    assertThat(perAddress.policy().window()).isEqualTo(Duration.ofSeconds(1));
    assertThat(perAddress.path()).isEqualTo("edge_proxy_per_ip.remote_address");
    assertThat(config.match("edge_proxy_per_ip", d("remote_address", "50.0.0.5")).rule().blocks()).isTrue();

    Rule apiKey = config.match("edge_proxy_per_ip", d("api_key", "k")).rule();
    assertThat(apiKey.policy().algorithm()).isEqualTo(Algorithm.GCRA);
    assertThat(apiKey.policy().burst()).isEqualTo(20);
    assertThat(apiKey.policy().window()).isEqualTo(Duration.ofMinutes(1));
    Rule upload = config.match("edge_proxy_per_ip", d("api_key", "k", "path", "/upload/a.bin")).rule();
    assertThat(upload.policy().algorithm()).isEqualTo(Algorithm.SLIDING_WINDOW);
    assertThat(upload.policy().limit()).isEqualTo(50);
    assertThat(config.match("edge_proxy_per_ip", d("api_key", "k", "path", "/download/a.bin"))).isNull();
  }
}

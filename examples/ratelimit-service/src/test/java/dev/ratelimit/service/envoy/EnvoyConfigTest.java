package dev.ratelimit.service.envoy;

import static dev.ratelimit.service.envoy.RlsClient.d;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Algorithm;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Reading the rules: what the reference accepts loads, anything else fails naming the file and the fix. */
class EnvoyConfigTest {

  private static EnvoyConfig parse(String yaml) {
    return EnvoyConfig.parse(Map.of("rules.yaml", yaml));
  }

  private static void refused(String yaml, String... messageParts) {
    assertThatThrownBy(() -> parse(yaml)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("rules.yaml: ").hasMessageContainingAll(messageParts);
  }

  @Test
  void aRuleIsAFixedWindowNamedAfterItsPlaceUnlessExtended() {
    EnvoyConfig config = parse("""
        domain: d
        descriptors:
          - key: a
            value: "1"
            rate_limit: {unit: minute, requests_per_unit: 7}
          - key: b
            rate_limit: {window: 250ms, requests_per_unit: 3, algorithm: gcra, burst: 9}
        """);
    Rule a = config.match("d", d("a", "1")).rule();
    assertThat(a.policy().algorithm()).isEqualTo(Algorithm.FIXED_WINDOW);
    assertThat(a.policy().name()).isEqualTo("d.a_1");
    assertThat(a.policy().window()).hasSeconds(60);
    Rule b = config.match("d", d("b", "x")).rule();
    assertThat(b.policy().algorithm()).isEqualTo(Algorithm.GCRA);
    assertThat(b.policy().burst()).isEqualTo(9);
    assertThat(b.policy().window()).hasMillis(250);
  }

  @Test
  void keysOfDistinctDescriptorsNeverMeet() {
    EnvoyConfig config = parse("""
        domain: d
        descriptors:
          - key: a
            descriptors:
              - key: b
                rate_limit: {unit: second, requests_per_unit: 1}
          - key: a=x|b
            rate_limit: {unit: second, requests_per_unit: 1}
        """);
    // written out plainly, both would be d|a=x|b=y
    String nested = config.match("d", d("a", "x", "b", "y")).key();
    String flat = config.match("d", d("a=x|b", "y")).key();
    assertThat(nested).isNotEqualTo(flat);
  }

  @Test
  void valuesAreTheTextWrittenNotWhatYamlWouldMakeOfIt() {
    EnvoyConfig config = parse("""
        domain: d
        descriptors:
          - key: zip
            value: 02134
            rate_limit: {unit: second, requests_per_unit: 1}
          - key: price
            value: 1.50
            shadow_mode: yes
            rate_limit: {unit: second, requests_per_unit: "2"}
        """);
    assertThat(config.match("d", d("zip", "02134")).rule().policy().name()).isEqualTo("d.zip_02134");
    assertThat(config.match("d", d("zip", "1116"))).isNull();
    Rule price = config.match("d", d("price", "1.50")).rule();
    assertThat(price.shadow()).isTrue();
    assertThat(price.requestsPerUnit()).isEqualTo(2);
  }

  @Test
  void wildcardsMatchAnyRunOfCharactersInOrder() {
    List<String> parts = List.of("/api/", "/resource/", "/action");
    assertThat(EnvoyConfig.wildcardMatch(parts, "/api/v1/resource/1/action")).isTrue();
    assertThat(EnvoyConfig.wildcardMatch(parts, "/api//resource//action")).isTrue();
    assertThat(EnvoyConfig.wildcardMatch(parts, "/api/resource/action")).isFalse();
    assertThat(EnvoyConfig.wildcardMatch(List.of("ab", "ba"), "aba")).isFalse(); // the ends must not overlap
    assertThat(EnvoyConfig.wildcardMatch(List.of("a", ""), "a")).isTrue();
  }

  @Test
  void whatTheReferenceRefusesIsRefusedNamingTheFileAndTheDescriptor() {
    refused("descriptors: []", "'domain' is required");
    refused("domain: d\ndescriptors:\n  - value: x\n", "has no 'key'");
    refused("domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: fortnight, requests_per_unit: 1}\n",
        "d.a.rate_limit.unit: invalid 'fortnight'");
    refused("domain: d\ndescriptors:\n  - key: a\n    rate_limit: {requests_per_unit: 1}\n", "'unit' is required");
    refused("domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unlimited: true, unit: second}\n",
        "an unlimited rule takes no unit");
    refused("domain: d\ndescriptors:\n  - key: a\n  - key: a\n", "duplicate descriptor d.a");
    refused("domain: d\ndescriptors:\n  - key: a\n    ratelimit: {}\n", "unknown field 'ratelimit'");
    refused("domain: d\ndescriptors:\n  - key: a\n    value: x\n    share_threshold: true\n",
        "share_threshold needs a wildcard value");
    refused("domain: d\ndescriptors:\n  - key: a\n    rate_limit: {name: n, replaces: [{name: n}], unit: second,"
        + " requests_per_unit: 1}\n", "replaces names the rule itself");
  }

  @Test
  void ourExtensionsAreCheckedToo() {
    refused("domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: 1,"
        + " algorithm: leaky}\n", "algorithm: unknown 'leaky'");
    refused("domain: d\ndescriptors:\n  - key: a\n    rate_limit: {window: soon, requests_per_unit: 1}\n",
        "d.a.rate_limit.window");
    refused("domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second, requests_per_unit: 1, burst: 0}\n",
        "burst must be a whole number of at least 1");
    refused("domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: second}\n", "requests_per_unit is required");
  }

  @Test
  void twoFilesOfOneDomainAreRefused() {
    assertThatThrownBy(() -> EnvoyConfig.parse(new java.util.TreeMap<>(Map.of("a.yaml", "domain: d",
        "b.yaml", "domain: d")))).hasMessage("b.yaml: domain 'd' is already configured by a.yaml: one file per domain");
  }
}

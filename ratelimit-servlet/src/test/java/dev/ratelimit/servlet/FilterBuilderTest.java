package dev.ratelimit.servlet;

import dev.ratelimit.http.RateLimitRule;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class FilterBuilderTest {
  private final RateLimiter limiter = RateLimiter.inMemory();
  private static final Policy P = Policy.of(1, Duration.ofSeconds(1)).withName("p");

  @AfterEach
  void close() {
    limiter.close();
  }

  @Test
  void aFilterNeedsARule() {
    assertThatThrownBy(() -> RateLimitFilter.builder(limiter).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least one rule");
  }

  @Test
  void ruleNamesAreDistinct() {
    RateLimitRule a = RateLimitRule.builder("a").path("/a").policy(P).build();
    RateLimitRule a2 = RateLimitRule.builder("a").path("/b").policy(P).build();
    assertThatThrownBy(() -> RateLimitFilter.builder(limiter).rule(a).rule(a2).build())
        .hasMessageContaining("rule name 'a' appears twice");
  }

  @Test
  void withMatchAllPolicyNamesAreDistinctAcrossRules() {
    RateLimitRule a = RateLimitRule.builder("a").path("/a").policy(P).build();
    RateLimitRule b = RateLimitRule.builder("b").path("/b").policy(P).build();
    assertThat(RateLimitFilter.builder(limiter).rule(a).rule(b).build()).isNotNull();
    assertThatThrownBy(() -> RateLimitFilter.builder(limiter).matchAll(true).rule(a).rule(b).build())
        .hasMessageContaining("policy name 'p' is used by rules 'a' and 'b'");
  }

  @Test
  void trustedProxiesAreCheckedWhenGiven() {
    assertThatThrownBy(() -> RateLimitFilter.builder(limiter).trustedProxies(List.of("10.0.0.0/8", "10.0.0.0/40")))
        .hasMessageContaining("'10.0.0.0/40'");
  }

  @Test
  void ruleValidation() {
    assertThatThrownBy(() -> RateLimitRule.builder("api").policy(P).build())
        .hasMessageContaining("rule 'api' needs at least one path");
    assertThatThrownBy(() -> RateLimitRule.builder("api").path("/x").build())
        .hasMessageContaining("rule 'api' needs at least one policy");
    assertThatThrownBy(() -> RateLimitRule.builder("api").path("/x").policy(P).policy(P.withLimit(5)).build())
        .hasMessageContaining("rule 'api': policy name 'p' appears twice");
    assertThatThrownBy(() -> RateLimitRule.builder("a:b").path("/x").policy(P).build())
        .hasMessageContaining("rule name 'a:b'");
    assertThatThrownBy(() -> RateLimitRule.builder("api").path("/x/{id").policy(P).build())
        .hasMessageContaining("rule 'api': path '/x/{id' does not parse");
    assertThatThrownBy(() -> RateLimitRule.builder("api").path("/x").policy(P.withName("größe")).build())
        .as("the limit headers cannot carry it").hasMessageContaining("policy name 'größe' (rule 'api')")
        .hasMessageContaining("such as 'gro-e'");
    assertThatThrownBy(() -> RateLimitRule.builder("api").path("/x").policy(P.withName("a\r\nb")).build())
        .hasMessageContaining("(rule 'api') cannot be written in the RateLimit and RateLimit-Policy headers");
    assertThatThrownBy(() -> RateLimitRule.builder("api").path("/x").method("GE T").policy(P).build())
        .hasMessageContaining("'GE T' is not an HTTP method");
    assertThatThrownBy(() -> RateLimitRule.builder("api").path("/x").method("PSOT").policy(P).build())
        .as("a misspelt method would never match").hasMessageContaining("'PSOT' is not an HTTP method this filter knows");
    assertThat(RateLimitRule.builder("api").path("/x").method("propfind", "PURGE", "LINK").policy(P).build().methods())
        .containsExactly("PROPFIND", "PURGE", "LINK");
    RateLimitRule rule = RateLimitRule.builder("api").path("/x").method("get", "Post").policy(P).key(null).build();
    assertThat(rule.methods()).isEqualTo(Set.of("GET", "POST"));
    assertThat(rule.key()).isEqualTo(RateLimitRule.DEFAULT_KEY);
    assertThat(rule.cost()).isEqualTo(RateLimitRule.DEFAULT_COST);
    assertThat(rule.maxCost()).isEqualTo(1);
  }
}

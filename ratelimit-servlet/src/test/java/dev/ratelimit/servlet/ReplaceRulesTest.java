package dev.ratelimit.servlet;

import dev.ratelimit.http.RateLimitRule;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link RateLimitFilter#replaceRules}: new rules at once, state kept, a bad set changes nothing. */
class ReplaceRulesTest {
  private final ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000));
  private final RateLimiter limiter = RateLimiter.builder().clock(clock).build();
  private TestServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
    limiter.close();
  }

  private static RateLimitRule api(long limit) {
    return RateLimitRule.builder("api").path("/api/**")
        .policy(Policy.of(limit, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW).withName("api")).build();
  }

  private int allowedOf(int requests, String path) {
    int allowed = 0;
    for (int i = 0; i < requests; i++) {
      allowed += server.get(path).statusCode() == 200 ? 1 : 0;
    }
    return allowed;
  }

  @Test
  void aRaisedLimitAppliesToTheNextRequestAndKeepsTheCount() {
    RateLimitFilter filter = RateLimitFilter.builder(limiter).rule(api(3)).build();
    server = TestServer.with(filter);
    assertThat(allowedOf(5, "/api/x")).isEqualTo(3);

    filter.replaceRules(List.of(api(5)));

    var next = server.get("/api/x");
    assertThat(next.statusCode()).isEqualTo(200);
    assertThat(next.headers().firstValue("RateLimit-Policy")).hasValue("\"api\";q=5;w=60");
    assertThat(next.headers().firstValue("RateLimit")).hasValueSatisfying(v -> assertThat(v).startsWith("\"api\";r=1;"));
    assertThat(allowedOf(5, "/api/x")).as("3 counted before, 1 just now: 1 of 5 left").isEqualTo(1);
  }

  @Test
  void newRulesReplaceTheOldOnesWhole() {
    RateLimitFilter filter = RateLimitFilter.builder(limiter).rule(api(1)).build();
    server = TestServer.with(filter);
    assertThat(allowedOf(3, "/api/x")).isEqualTo(1);
    RateLimitRule other = RateLimitRule.builder("other").path("/other/**")
        .policy(Policy.of(1, Duration.ofMinutes(1)).withName("other")).build();

    filter.replaceRules(List.of(other));

    assertThat(filter.ruleNames()).containsExactly("other");
    assertThat(allowedOf(3, "/api/x")).as("no rule covers /api any more").isEqualTo(3);
    assertThat(allowedOf(3, "/other/y")).isEqualTo(1);
  }

  @Test
  void aBadRuleSetIsRefusedAndChangesNothing() {
    RateLimitFilter filter = RateLimitFilter.builder(limiter).rule(api(2)).build();
    server = TestServer.with(filter);
    assertThatThrownBy(() -> filter.replaceRules(List.of()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least one rule");
    assertThatThrownBy(() -> filter.replaceRules(List.of(api(1), api(4))))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("rule name 'api' appears twice");
    assertThat(filter.ruleNames()).containsExactly("api");
    assertThat(allowedOf(4, "/api/x")).as("still 2 per minute").isEqualTo(2);
  }

  @Test
  void matchAllStillNeedsDistinctPolicyNames() {
    RateLimitFilter filter = RateLimitFilter.builder(limiter).matchAll(true).rule(api(2)).build();
    RateLimitRule clash = RateLimitRule.builder("clash").path("/x")
        .policy(Policy.of(1, Duration.ofMinutes(1)).withName("api")).build();
    assertThatThrownBy(() -> filter.replaceRules(List.of(api(2), clash)))
        .hasMessageContaining("policy name 'api' is used by rules 'api' and 'clash'");
  }

  @Test
  void aFilterNotYetInitialisedHasNothingToReplace() {
    RateLimitFilter filter = new RateLimitFilter();
    assertThat(filter.ruleNames()).isEmpty();
    assertThatThrownBy(() -> filter.replaceRules(List.of(api(1))))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("not initialised");
  }
}

package dev.ratelimit.service;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import dev.ratelimit.Decision;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import java.time.Duration;
import java.util.List;

/** The JSON shapes of the API (see {@code openapi.yaml}); durations are seconds with µs precision. */
final class Api {
  private Api() {}

  /** {@code POST /v1/check}: one policy; {@code cost} defaults to 1. */
  record CheckRequest(String key, String policy, Long cost) {}

  /** {@code POST /v1/inspect} and {@code POST /v1/reset}: one key under one policy, any key a check accepts. */
  record KeyRequest(String key, String policy) {}

  /** {@code POST /v1/check-all}: several policies, one atomic decision; {@code cost} defaults to 1. */
  record CheckAllRequest(String key, List<String> policies, Long cost) {}

  /**
   * {@code POST /v1/reserve}: one policy ({@code policy}) or several ({@code policies}), and the
   * units to take now.
   */
  record ReserveRequest(String key, String policy, List<String> policies, Long estimate) {}

  /** {@code POST /v1/commit}: a token of {@code /v1/reserve} and the actual cost. */
  record CommitRequest(String token, Long actual) {}

  /** {@code POST /v1/cancel}: a token of {@code /v1/reserve}. */
  record CancelRequest(String token) {}

  /** An allowed reservation: its decisions, and the token that settles it, once, on any instance. */
  record ReservedBody(
      boolean allowed,
      String limiting,
      List<DecisionBody> decisions,
      long estimate,
      String token,
      @JsonProperty("expires_at") String expiresAt) {}

  /** A settled reservation: {@code committed} (at {@code actual}) or {@code cancelled}. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  record SettledBody(String settled, long estimate, Long actual) {}

  /** One decision. {@code degraded} when the backend could not answer and the failure mode decided. */
  @JsonInclude(JsonInclude.Include.ALWAYS)
  record DecisionBody(
      String policy,
      boolean allowed,
      long limit,
      Long remaining,
      @JsonProperty("retry_after") double retryAfter,
      @JsonProperty("reset_after") double resetAfter,
      double delay,
      boolean degraded) {

    static DecisionBody of(Decision decision) {
      return new DecisionBody(decision.policy().name(), decision.allowed(), decision.limit(),
          decision.isDegraded() ? null : decision.remaining(),
          seconds(decision.retryAfterMicros()), seconds(decision.resetAfterMicros()), seconds(decision.delayMicros()),
          decision.isDegraded());
    }
  }

  /** The verdict of a multi-policy check, the most limiting policy's name, and every decision. */
  record CheckAllBody(boolean allowed, String limiting, List<DecisionBody> decisions) {
    static CheckAllBody of(MultiDecision multi) {
      return new CheckAllBody(multi.allowed(), multi.limiting().policy().name(),
          multi.decisions().stream().map(DecisionBody::of).toList());
    }
  }

  /** A configured policy. */
  record PolicyBody(
      String name,
      long limit,
      String window,
      @JsonProperty("window_seconds") double windowSeconds,
      String algorithm,
      long burst) {
    static PolicyBody of(Policy policy) {
      return new PolicyBody(policy.name(), policy.limit(), policy.window().toString(), seconds(policy.window()),
          policy.algorithm().name(), policy.burst());
    }
  }

  static double seconds(Duration duration) {
    return duration.getSeconds() + duration.getNano() / 1_000_000_000.0;
  }

  static double seconds(long micros) {
    return micros / 1_000_000.0;
  }
}

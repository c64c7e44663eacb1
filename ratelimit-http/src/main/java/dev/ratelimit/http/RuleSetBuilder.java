package dev.ratelimit.http;

import dev.ratelimit.RateLimiter;
import dev.ratelimit.internal.LogThrottle;
import dev.ratelimit.internal.http.ForwardedClient;
import dev.ratelimit.internal.http.HttpEngine;
import dev.ratelimit.internal.http.RequestExpressions;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What both filters' builders configure: the rules and how they apply, trusted proxies, limit
 * headers, missing keys and the denied response. {@code RateLimitFilter.Builder} (servlet) and
 * {@code RateLimitWebFilter.Builder} (WebFlux) extend it with what only their server API has. Not
 * thread-safe; a filter's {@code build()} copies what it holds.
 *
 * @param <B> the builder itself, which each method returns
 */
public abstract class RuleSetBuilder<B extends RuleSetBuilder<B>> {
  private final RateLimiter limiter;
  private final List<RateLimitRule> rules = new ArrayList<>();
  private boolean matchAll;
  private List<String> trustedProxies = List.of();
  private HeaderOptions headers = HeaderOptions.DEFAULT;
  private MissingKey missingKey = MissingKey.SHARED_BUCKET;
  private DeniedResponse deniedResponse = DeniedResponse.PROBLEM_JSON;

  /** A builder of a filter that checks with {@code limiter} (which the filter never closes). */
  protected RuleSetBuilder(RateLimiter limiter) {
    this.limiter = Objects.requireNonNull(limiter, "limiter");
  }

  @SuppressWarnings("unchecked")
  private B self() {
    return (B) this;
  }

  /** Adds a rule; rules are tried in the order added. */
  public B rule(RateLimitRule rule) {
    rules.add(Objects.requireNonNull(rule, "rule"));
    return self();
  }

  /**
   * Whether every matching rule applies ({@code true}) or only the first ({@code false}, the
   * default). With {@code true}, policy names must be distinct across rules, so that limit
   * headers and {@code violated-policies} name each policy once.
   */
  public B matchAll(boolean matchAll) {
    this.matchAll = matchAll;
    return self();
  }

  /**
   * The networks of the proxies whose {@code X-Forwarded-For} and {@code Forwarded} headers are
   * believed (IPv4 or IPv6 networks such as {@code 10.0.0.0/8}, or single addresses); default none.
   *
   * @throws IllegalArgumentException naming an entry that is not an IPv4 or IPv6 network
   */
  public B trustedProxies(List<String> cidrs) {
    new ForwardedClient(cidrs); // validates now, naming the bad entry
    this.trustedProxies = List.copyOf(cidrs);
    return self();
  }

  /** Which limit headers to send; default {@link HeaderOptions#DEFAULT}. */
  public B headers(HeaderOptions headers) {
    this.headers = Objects.requireNonNull(headers, "headers");
    return self();
  }

  /** What a request whose key is missing gets; default {@link MissingKey#SHARED_BUCKET}. */
  public B missingKey(MissingKey missingKey) {
    this.missingKey = Objects.requireNonNull(missingKey, "missingKey");
    return self();
  }

  /**
   * What a denied request is answered with, unless its rule has a {@link
   * RateLimitRule#deniedResponse() response} of its own; default {@link DeniedResponse#PROBLEM_JSON}.
   */
  public B deniedResponse(DeniedResponse deniedResponse) {
    this.deniedResponse = Objects.requireNonNull(deniedResponse, "deniedResponse");
    return self();
  }

  /**
   * The engine both filters run on, for the filter's {@code build()}: its expressions and patterns
   * parsed once.
   *
   * @param expressions the door's expressions
   * @param logger the door's logger
   * @param builderName the door's builder, as log lines name it
   * @throws IllegalArgumentException when there is no rule, two rules share a name, with {@code
   *     matchAll} two rules share a policy name, or an expression is refused
   */
  protected final HttpEngine engine(RequestExpressions expressions, System.Logger logger, String builderName) {
    return new HttpEngine(limiter, List.copyOf(rules), matchAll, trustedProxies, headers, missingKey,
        deniedResponse, expressions, logger, builderName, LogThrottle.perMinute());
  }
}

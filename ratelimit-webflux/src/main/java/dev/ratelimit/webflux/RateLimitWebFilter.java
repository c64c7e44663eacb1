package dev.ratelimit.webflux;

import dev.ratelimit.MultiDecision;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.http.DeniedResponse;
import dev.ratelimit.http.MissingKey;
import dev.ratelimit.http.RateLimitRule;
import dev.ratelimit.http.RuleSetBuilder;
import dev.ratelimit.internal.http.CompiledRule;
import dev.ratelimit.internal.http.HttpEngine;
import dev.ratelimit.internal.http.ResponseView;
import dev.ratelimit.internal.http.LimitHeaders;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.springframework.core.Ordered;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.cors.reactive.CorsUtils;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A Spring WebFlux {@link WebFilter} that rate-limits requests by the servlet filter's {@link
 * RateLimitRule rules}, with its keys, headers, denied responses and failure modes, without ever
 * blocking an event-loop thread: each check is a {@link RateLimiter#checkAllAsync checkAllAsync},
 * the response waits for it, no thread does.
 *
 * <pre>{@code
 * RateLimitWebFilter filter = RateLimitWebFilter.builder(limiter)
 *     .rule(RateLimitRule.builder("api")
 *         .path("/api/**")
 *         .policy(Policy.parse("100/1m").withName("per-ip"))
 *         .build())
 *     .trustedProxies(List.of("10.0.0.0/8"))
 *     .build();
 * // a @Bean in a WebFlux application, or WebHttpHandlerBuilder.webHandler(...).filter(filter)
 * }</pre>
 *
 * <p>Per request, as the servlet filter: rules are tried in order (the first that matches, or with
 * {@link Builder#matchAll matchAll} every one), on the path within the application as WebFlux
 * routes it; keys and costs are evaluated first (a missing key per {@link MissingKey}); each
 * matched rule's policies are checked together under {@code <rule>:<key>}, rule after rule,
 * stopping at a denial; the limit headers are set (none when the failure mode decided); allowed,
 * the chain proceeds; denied, the {@link DeniedExchangeHandler} answers, by default with the rule's
 * or the filter's {@link DeniedResponse}. The expressions' variables are the servlet filter's:
 * {@code #clientIp} (the same trusted-proxy rules), {@code #clientNetwork}, {@code #path} (decoded),
 * {@code #method}, {@code #headers}, {@code #params} (the query's; the body is never read), {@code
 * #pathVariables}, {@code #principal} (the exchange's, resolved only when a rule reads it) and
 * {@code #request} with the properties a reactive request has (no servlet-only ones such as {@code
 * servletPath} or {@code remoteUser}: a rule that reads one is refused when the filter is built).
 *
 * <p>A rule with {@code countWhen} or {@code costAfter} reserves its cost before the request
 * ({@link RateLimiter#reserveAsync}) and settles it just before the response is committed, its
 * status and headers known ({@link dev.ratelimit.Reservation#commitAsync}, {@code cancelAsync}):
 * nothing blocks.
 */
public final class RateLimitWebFilter implements WebFilter, Ordered {
  /** Spring Security's WebFilterChainProxy order; the default runs the filter just before it, as the servlet one. */
  public static final int DEFAULT_ORDER = -101;

  private final DeniedExchangeHandler deniedHandler;
  private final int order;
  private volatile HttpEngine engine;

  private RateLimitWebFilter(Builder b) {
    this.engine = b.engine();
    this.deniedHandler = b.deniedHandler != null ? b.deniedHandler
        : (exchange, decision, configured) -> ExchangeResponses.writeDenied(exchange, decision.decisions(),
            engine.headers(), configured);
    this.order = b.order;
  }

  /** A builder of a filter that checks with {@code limiter} (which the filter never closes). */
  public static Builder builder(RateLimiter limiter) {
    return new Builder(limiter);
  }

  /**
   * Replaces the rules, everything else kept, as {@code RateLimitFilter#replaceRules}: requests
   * that start after this call see the new rules; a bad set changes nothing.
   *
   * @throws IllegalArgumentException as {@link Builder#build()} for the same rules
   */
  public synchronized void replaceRules(List<RateLimitRule> newRules) {
    engine = engine.withRules(newRules);
  }

  /** The names of the rules in force, in order (for diagnostics). */
  public List<String> ruleNames() {
    return engine.ruleNames();
  }

  /** The filter's order among the application's WebFilters ({@link Builder#order}). */
  @Override
  public int getOrder() {
    return order;
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    HttpEngine current = engine;
    if (exchange.getAttribute(current.appliedAttribute()) != null) {
      return chain.filter(exchange); // the same exchange through the filter again: counted once
    }
    if (!current.readsPrincipal()) {
      return apply(current, exchange, chain, null);
    }
    return exchange.getPrincipal().map(p -> Optional.ofNullable(p.getName())).defaultIfEmpty(Optional.empty())
        .flatMap(name -> apply(current, exchange, chain, name.orElse(null)));
  }

  private Mono<Void> apply(HttpEngine current, ServerWebExchange exchange, WebFilterChain chain, String principal) {
    ServerHttpRequest request = exchange.getRequest();
    String method = request.getMethod().name();
    PathContainer path = request.getPath().pathWithinApplication();
    String raw = path.value();
    PathContainer withoutSlash = raw.length() > 1 && raw.endsWith("/")
        ? PathContainer.parsePath(raw.substring(0, raw.length() - 1)) : null;
    HttpEngine.Plan plan = current.plan(method, CorsUtils.isPreFlightRequest(request), path, withoutSlash,
        new ExchangeExpressions.RequestValues(request, r -> clientIp(current, r), method, principal));
    if (plan == null) {
      return chain.filter(exchange);
    }
    exchange.getAttributes().put(current.appliedAttribute(), Boolean.TRUE);
    if (plan.missingKey() != null) {
      return rejectMissingKey(exchange, plan.missingKey());
    }
    return Flux.range(0, plan.size())
        .concatMap(i -> check(request, plan, i))
        .takeUntil(decision -> !decision.allowed())
        .collectList()
        .flatMap(results -> answer(current, exchange, chain, plan, plan.verdict(results)));
  }

  /** The client's address, null when the server does not know the peer's. */
  private static String clientIp(HttpEngine current, ServerHttpRequest request) {
    return ReactiveClientIp.of(request, current::clientIp);
  }

  /**
   * Rule {@code i}'s check without blocking an event loop (a charge, or with count-when or
   * cost-after a reservation): answered now (memory, the near-cache), the exchange goes on here;
   * else back from the backend's I/O thread onto the request's event loop.
   */
  private static Mono<MultiDecision> check(ServerHttpRequest request, HttpEngine.Plan plan, int i) {
    return Mono.defer(() -> EventLoops.answer(plan.checkAsync(i), EventLoops.of(request)));
  }

  private Mono<Void> answer(HttpEngine current, ServerWebExchange exchange, WebFilterChain chain,
      HttpEngine.Plan plan, HttpEngine.Verdict verdict) {
    if (!verdict.allowed()) {
      ExchangeResponses.writeHeadersOfDenial(exchange, verdict.checked(), current.headers());
      Mono<Void> denied = deniedHandler.handle(exchange, verdict.decision(), verdict.deniedResponse());
      // refused: what earlier count-when rules reserved is given back
      return plan.holds() ? resumed(exchange.getRequest(), plan::releaseAsync).then(denied) : denied;
    }
    ExchangeResponses.writeHeaders(exchange, verdict.checked(), current.headers());
    if (!verdict.countAfter()) {
      return chain.filter(exchange);
    }
    // settled just before the response is committed, its status known: the client never sees the
    // response while its unit is still held (an error becomes the error handler's response, 500 by
    // default, and is settled with it); an exchange that never answers stays charged
    exchange.getResponse().beforeCommit(() -> settle(exchange, plan, outcome(exchange)));
    return chain.filter(exchange);
  }

  /** Settles the request's reservations for {@code response} ({@link HttpEngine.Plan#settleAsync}); never fails. */
  private static Mono<Void> settle(ServerWebExchange exchange, HttpEngine.Plan plan, ResponseView response) {
    return resumed(exchange.getRequest(), () -> plan.settleAsync(response));
  }

  /**
   * {@code settles} (which never fail), without blocking, the exchange then going on on its own
   * event loop (see {@link EventLoops}).
   */
  private static Mono<Void> resumed(ServerHttpRequest request, java.util.function.Supplier<CompletionStage<Void>> settles) {
    return Mono.defer(() -> EventLoops.answer(settles.get().thenApply(v -> Boolean.TRUE), EventLoops.of(request)))
        .then();
  }

  /** {@code #response}: the status (200 when none was set) and headers about to be sent. */
  private static ResponseView outcome(ServerWebExchange exchange) {
    HttpStatusCode status = exchange.getResponse().getStatusCode();
    HttpHeaders headers = exchange.getResponse().getHeaders();
    return ResponseView.of(status == null ? HttpStatus.OK.value() : status.value(), headers::getFirst,
        headers::headerNames);
  }

  private static Mono<Void> rejectMissingKey(ServerWebExchange exchange, CompiledRule rule) {
    if (exchange.getResponse().isCommitted()) {
      return Mono.empty();
    }
    exchange.getResponse().setStatusCode(HttpStatus.BAD_REQUEST);
    exchange.getResponse().getHeaders().set("Cache-Control", "no-store");
    return ExchangeResponses.body(exchange.getResponse(), LimitHeaders.PROBLEM_JSON, HttpEngine.missingKeyBody(rule));
  }

  /**
   * Configures a {@link RateLimitWebFilter}: the rules and what both filters share ({@link
   * RuleSetBuilder}), who answers a denial, and the filter's order. Not thread-safe; {@link
   * #build()} copies what it holds.
   */
  public static final class Builder extends RuleSetBuilder<Builder> {
    private DeniedExchangeHandler deniedHandler;
    private int order = DEFAULT_ORDER;

    private Builder(RateLimiter limiter) {
      super(limiter);
    }

    /** Who answers a denied request; default one that writes the rule's or the filter's denied response. */
    public Builder deniedHandler(DeniedExchangeHandler deniedHandler) {
      this.deniedHandler = Objects.requireNonNull(deniedHandler, "deniedHandler");
      return this;
    }

    /** The filter's order among WebFilters; default {@link #DEFAULT_ORDER}, just before Spring Security's. */
    public Builder order(int order) {
      this.order = order;
      return this;
    }

    /**
     * The filter, its expressions and patterns parsed once.
     *
     * @throws IllegalArgumentException when there is no rule, two rules share a name, with {@code
     *     matchAll} two rules share a policy name, or a rule's expression reads what a reactive
     *     request lacks
     */
    public RateLimitWebFilter build() {
      return new RateLimitWebFilter(this);
    }

    HttpEngine engine() {
      return engine(ExchangeExpressions.DOOR, ExchangeExpressions.LOG, "RateLimitWebFilter.Builder");
    }
  }
}

package dev.ratelimit.webflux;

import dev.ratelimit.Decision;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.internal.LogThrottle;
import dev.ratelimit.internal.expression.Pipeline;
import dev.ratelimit.internal.http.CompiledRule;
import dev.ratelimit.internal.http.ForwardedClient;
import dev.ratelimit.internal.http.LimitHeaders;
import dev.ratelimit.servlet.DeniedResponse;
import dev.ratelimit.servlet.HeaderOptions;
import dev.ratelimit.servlet.MissingKey;
import dev.ratelimit.servlet.RateLimitRule;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.springframework.core.Ordered;
import org.springframework.expression.EvaluationContext;
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
import reactor.core.scheduler.Schedulers;

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
 * <p>A rule with {@code countWhen} peeks before the request ({@link RateLimiter#peekAll}, on
 * Reactor's bounded-elastic scheduler, since a remote backend's peek is a blocking read) and is
 * charged once the response's status is known, without blocking.
 */
public final class RateLimitWebFilter implements WebFilter, Ordered {
  /** Spring Security's WebFilterChainProxy order; the default runs the filter just before it, as the servlet one. */
  public static final int DEFAULT_ORDER = -101;

  private static final System.Logger LOG = System.getLogger(RateLimitWebFilter.class.getName());
  private static final AtomicLong INSTANCES = new AtomicLong();

  private final RateLimiter limiter;
  private final boolean matchAll;
  private final ForwardedClient clientIp;
  private final HeaderOptions headers;
  private final DeniedResponse deniedResponse;
  private final DeniedExchangeHandler deniedHandler;
  private final Pipeline pipeline;
  private final LogThrottle log;
  private final int order;
  private final String appliedAttribute;
  private final Consumer<String> onForwardingIgnored = this::forwardingIgnored;
  private volatile Rules rules;

  /** The rules in force, and whether any reads {@code #principal} (resolved per request only then). */
  private record Rules(List<CompiledRule> list, boolean principal) {}

  private RateLimitWebFilter(Builder b) {
    this.limiter = b.limiter;
    this.matchAll = b.matchAll;
    this.clientIp = new ForwardedClient(b.trustedProxies);
    this.headers = b.headers;
    this.deniedResponse = b.deniedResponse;
    this.deniedHandler = b.deniedHandler != null ? b.deniedHandler
        : (exchange, decision, configured) -> ExchangeResponses.writeDenied(exchange, decision.decisions(), headers,
            configured);
    this.log = LogThrottle.perMinute();
    this.pipeline = ExchangeExpressions.pipeline(b.missingKey, log);
    this.order = b.order;
    this.appliedAttribute = RateLimitWebFilter.class.getName() + ".applied." + INSTANCES.incrementAndGet();
    this.rules = compile(b.rules);
  }

  /** A builder of a filter that checks with {@code limiter} (which the filter never closes). */
  public static Builder builder(RateLimiter limiter) {
    return new Builder(limiter);
  }

  private Rules compile(List<RateLimitRule> list) {
    CompiledRule.validate(list, matchAll);
    List<CompiledRule> compiled = new ArrayList<>(list.size());
    boolean principal = false;
    for (RateLimitRule rule : list) {
      CompiledRule c = new CompiledRule(rule, pipeline, ExchangeExpressions.VARIABLES,
          ExchangeExpressions.COUNT_VARIABLES);
      principal |= c.variables.contains("principal") || c.conditionVariables.contains("principal")
          || c.countVariables.contains("principal");
      compiled.add(c);
    }
    return new Rules(List.copyOf(compiled), principal);
  }

  /**
   * Replaces the rules, everything else kept, as {@code RateLimitFilter#replaceRules}: requests
   * that start after this call see the new rules; a bad set changes nothing.
   *
   * @throws IllegalArgumentException as {@link Builder#build()} for the same rules
   */
  public void replaceRules(List<RateLimitRule> newRules) {
    Rules compiled = compile(List.copyOf(newRules));
    synchronized (this) {
      rules = compiled;
    }
  }

  /** The names of the rules in force, in order (for diagnostics). */
  public List<String> ruleNames() {
    return rules.list().stream().map(r -> r.rule.name()).toList();
  }

  /** The filter's order among the application's WebFilters ({@link Builder#order}). */
  @Override
  public int getOrder() {
    return order;
  }

  @Override
  public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
    if (exchange.getAttribute(appliedAttribute) != null) {
      return chain.filter(exchange); // the same exchange through the filter again: counted once
    }
    Rules current = rules;
    if (!current.principal()) {
      return apply(exchange, chain, current.list(), null);
    }
    return exchange.getPrincipal().map(p -> Optional.ofNullable(p.getName())).defaultIfEmpty(Optional.empty())
        .flatMap(name -> apply(exchange, chain, current.list(), name.orElse(null)));
  }

  private Mono<Void> apply(ServerWebExchange exchange, WebFilterChain chain, List<CompiledRule> list,
      String principal) {
    ServerHttpRequest request = exchange.getRequest();
    String method = request.getMethod().name();
    boolean preflight = CorsUtils.isPreFlightRequest(request);
    PathContainer path = request.getPath().pathWithinApplication();
    String raw = path.value();
    PathContainer withoutSlash = raw.length() > 1 && raw.endsWith("/")
        ? PathContainer.parsePath(raw.substring(0, raw.length() - 1)) : null;

    List<CompiledRule> matched = new ArrayList<>(2);
    List<Map<String, String>> pathVariables = new ArrayList<>(2);
    ExchangeExpressions.RequestValues values = null;
    for (CompiledRule rule : list) {
      if (!rule.matchesMethod(method, preflight)) {
        continue;
      }
      Map<String, String> variables = rule.match(path, withoutSlash);
      if (variables != null && rule.hasConditions()) {
        if (values == null) {
          values = values(request, method, principal);
        }
        if (!rule.applies(ExchangeExpressions.context(values, variables, rule.conditionVariables))) {
          continue;
        }
      }
      if (variables != null) {
        matched.add(rule);
        pathVariables.add(variables);
        if (!matchAll) {
          break;
        }
      }
    }
    if (matched.isEmpty()) {
      return chain.filter(exchange);
    }
    exchange.getAttributes().put(appliedAttribute, Boolean.TRUE);

    // every key and cost first, so that a rejected request consumes nothing anywhere
    if (values == null) {
      values = values(request, method, principal);
    }
    String[] keys = new String[matched.size()];
    long[] costs = new long[matched.size()];
    for (int i = 0; i < matched.size(); i++) {
      CompiledRule rule = matched.get(i);
      EvaluationContext context = ExchangeExpressions.context(values, pathVariables.get(i), rule.variables);
      keys[i] = rule.key.evaluate(context);
      if (keys[i] == null) {
        return rejectMissingKey(exchange, rule);
      }
      costs[i] = rule.cost.evaluate(context, rule.maxCost);
    }
    ExchangeExpressions.RequestValues requestValues = values;
    return Flux.range(0, matched.size())
        .concatMap(i -> check(request, matched.get(i), keys[i], costs[i]))
        .takeUntil(decision -> !decision.allowed())
        .collectList()
        .flatMap(results -> answer(exchange, chain, requestValues, matched, pathVariables, keys, costs, results));
  }

  /** One rule's check: charged now, or with count-when only peeked at (charged after the response). */
  private Mono<MultiDecision> check(ServerHttpRequest request, CompiledRule rule, String key, long cost) {
    if (rule.countWhen == null) {
      return Mono.defer(() -> {
        CompletableFuture<MultiDecision> answer = limiter.checkAllAsync(key, rule.rule.policies(), cost)
            .toCompletableFuture();
        // answered now (memory, the near-cache): go on here; else back from the backend's I/O thread
        return answer.isDone() ? Mono.fromFuture(answer)
            : Mono.fromFuture(answer).publishOn(EventLoops.of(request));
      });
    }
    return Mono.fromCallable(() -> limiter.peekAll(key, rule.rule.policies(), cost))
        .subscribeOn(Schedulers.boundedElastic()).publishOn(EventLoops.of(request));
  }

  private Mono<Void> answer(ServerWebExchange exchange, WebFilterChain chain,
      ExchangeExpressions.RequestValues values, List<CompiledRule> matched, List<Map<String, String>> pathVariables,
      String[] keys, long[] costs, List<MultiDecision> results) {
    List<Decision> checked = new ArrayList<>();
    boolean countAfter = false;
    for (int i = 0; i < results.size(); i++) {
      checked.addAll(results.get(i).decisions());
      countAfter |= matched.get(i).countWhen != null;
    }
    MultiDecision last = results.get(results.size() - 1);
    if (!LimitHeaders.hasLimitHeaders(checked)) {
      log.warn(LOG, "degraded", "the rate limiter's backend failed; its failure mode decided "
          + (last.allowed() ? "to allow" : "to deny") + " and no limit headers are sent");
    }
    if (!last.allowed()) {
      RateLimitRule rule = matched.get(results.size() - 1).rule;
      List<Decision> all = ExchangeResponses.record(exchange, checked);
      long retry = LimitHeaders.ceilSeconds(LimitHeaders.retryAfterMicros(all));
      LimitHeaders.fields(all, headers.draft(), headers.legacy(), retry)
          .forEach(exchange.getResponse().getHeaders()::set);
      DeniedResponse configured = rule.deniedResponse() != null ? rule.deniedResponse() : deniedResponse;
      return deniedHandler.handle(exchange, new MultiDecision(false, checked), configured);
    }
    ExchangeResponses.writeHeaders(exchange, checked, headers);
    if (!countAfter) {
      return chain.filter(exchange);
    }
    return chain.filter(exchange)
        .onErrorResume(e -> charge(values, matched, pathVariables, keys, costs,
            exchange.getResponse().isCommitted() ? status(exchange) : 500).then(Mono.error(e)))
        .then(Mono.defer(() -> charge(values, matched, pathVariables, keys, costs, status(exchange))));
  }

  private static int status(ServerWebExchange exchange) {
    HttpStatusCode status = exchange.getResponse().getStatusCode();
    return status == null ? HttpStatus.OK.value() : status.value();
  }

  /**
   * Charges each count-when rule whose condition holds for the response's {@code status}, one
   * {@code checkAllAsync} each; never fails: the response is already made.
   */
  private Mono<Void> charge(ExchangeExpressions.RequestValues values, List<CompiledRule> matched,
      List<Map<String, String>> pathVariables, String[] keys, long[] costs, int status) {
    return Flux.range(0, matched.size())
        .filter(i -> {
          CompiledRule rule = matched.get(i);
          if (rule.countWhen == null) {
            return false;
          }
          EvaluationContext context = ExchangeExpressions.context(values, pathVariables.get(i), rule.countVariables);
          context.setVariable("response", new ExchangeExpressions.ResponseStatus(status));
          return rule.countWhen.test(context);
        })
        .concatMap(i -> Mono.fromCompletionStage(() -> limiter.checkAllAsync(keys[i], matched.get(i).rule.policies(),
            costs[i])))
        .then()
        .onErrorResume(e -> {
          log.warn(LOG, "count-when", "a request's count-when charge failed, and was not made: "
              + LogThrottle.sanitize(e));
          return Mono.empty();
        });
  }

  private ExchangeExpressions.RequestValues values(ServerHttpRequest request, String method, String principal) {
    String remote = ExchangeExpressions.address(request.getRemoteAddress());
    String client = remote == null ? null : clientIp.resolve(remote, request.getHeaders().get("X-Forwarded-For"),
        request.getHeaders().get("Forwarded"), onForwardingIgnored);
    return new ExchangeExpressions.RequestValues(request, client,
        ExchangeExpressions.decodedPath(request.getPath().pathWithinApplication()), method, principal);
  }

  private Mono<Void> rejectMissingKey(ServerWebExchange exchange, CompiledRule rule) {
    if (exchange.getResponse().isCommitted()) {
      return Mono.empty();
    }
    exchange.getResponse().setStatusCode(HttpStatus.BAD_REQUEST);
    exchange.getResponse().getHeaders().set("Cache-Control", "no-store");
    return ExchangeResponses.body(exchange.getResponse(), LimitHeaders.PROBLEM_JSON,
        "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,\"detail\":"
            + LimitHeaders.jsonString("The request lacks what rate limit '" + rule.rule.name() + "' is keyed on.")
            + "}");
  }

  /** A local peer's forwarding headers were ignored: likely a proxy not declared trusted. */
  private void forwardingIgnored(String peer) {
    long suppressed = log.tryAcquire("forwarding-ignored");
    if (suppressed < 0) {
      return;
    }
    LOG.log(System.Logger.Level.WARNING, "requests from " + peer + " carry X-Forwarded-For or Forwarded, but "
        + peer + " is not a trusted proxy, so #clientIp is " + peer + " for them. If it is a proxy in front of the"
        + " application, add its address or network to the trusted proxies (ratelimit.trusted-proxies,"
        + " RateLimitWebFilter.Builder#trustedProxies), or every client behind it shares its keys"
        + log.note(suppressed));
  }

  /** Configures a {@link RateLimitWebFilter}. Not thread-safe; {@link #build()} copies what it holds. */
  public static final class Builder {
    private final RateLimiter limiter;
    private final List<RateLimitRule> rules = new ArrayList<>();
    private boolean matchAll;
    private List<String> trustedProxies = List.of();
    private HeaderOptions headers = HeaderOptions.DEFAULT;
    private MissingKey missingKey = MissingKey.SHARED_BUCKET;
    private DeniedResponse deniedResponse = DeniedResponse.PROBLEM_JSON;
    private DeniedExchangeHandler deniedHandler;
    private int order = DEFAULT_ORDER;

    private Builder(RateLimiter limiter) {
      this.limiter = Objects.requireNonNull(limiter, "limiter");
    }

    /** Adds a rule; rules are tried in the order added. */
    public Builder rule(RateLimitRule rule) {
      rules.add(Objects.requireNonNull(rule, "rule"));
      return this;
    }

    /** Whether every matching rule applies ({@code true}) or only the first (the default). */
    public Builder matchAll(boolean matchAll) {
      this.matchAll = matchAll;
      return this;
    }

    /**
     * The networks of the proxies whose {@code X-Forwarded-For} and {@code Forwarded} headers are
     * believed; default none.
     *
     * @throws IllegalArgumentException naming an entry that is not an IPv4 or IPv6 network
     */
    public Builder trustedProxies(List<String> cidrs) {
      new ForwardedClient(cidrs); // validates now, naming the bad entry
      this.trustedProxies = List.copyOf(cidrs);
      return this;
    }

    /** Which limit headers to send; default {@link HeaderOptions#DEFAULT}. */
    public Builder headers(HeaderOptions headers) {
      this.headers = Objects.requireNonNull(headers, "headers");
      return this;
    }

    /** What a request whose key is missing gets; default {@link MissingKey#SHARED_BUCKET}. */
    public Builder missingKey(MissingKey missingKey) {
      this.missingKey = Objects.requireNonNull(missingKey, "missingKey");
      return this;
    }

    /** What a denied request is answered with, unless its rule has its own; default {@link DeniedResponse#PROBLEM_JSON}. */
    public Builder deniedResponse(DeniedResponse deniedResponse) {
      this.deniedResponse = Objects.requireNonNull(deniedResponse, "deniedResponse");
      return this;
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
  }
}

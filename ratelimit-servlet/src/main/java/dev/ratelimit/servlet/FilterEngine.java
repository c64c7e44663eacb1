package dev.ratelimit.servlet;

import dev.ratelimit.Decision;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.internal.LogThrottle;
import dev.ratelimit.internal.http.CompiledRule;
import dev.ratelimit.internal.expression.Pipeline;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.springframework.expression.EvaluationContext;
import org.springframework.http.server.PathContainer;

/** What the filter does per request, once built: match, resolve keys and costs, check, answer. */
final class FilterEngine {
  private static final AtomicLong INSTANCES = new AtomicLong();
  private static final System.Logger LOG = System.getLogger(RateLimitFilter.class.getName());

  private final RateLimiter limiter;
  private final List<CompiledRule> rules;
  private final boolean matchAll;
  private final ClientIp clientIp;
  private final HeaderOptions headers;
  private final DeniedResponse deniedResponse;
  private final Pipeline pipeline;
  private final DeniedHandler deniedHandler;
  private final LogThrottle log;
  /** {@link #forwardingIgnored}, made once. */
  private final java.util.function.Consumer<String> onForwardingIgnored = this::forwardingIgnored;
  private final java.util.function.Function<HttpServletRequest, String> clientIpOf = this::clientIpOf;
  private final String appliedAttribute;

  FilterEngine(RateLimiter limiter, List<RateLimitRule> rules, boolean matchAll, ClientIp clientIp,
      HeaderOptions headers, MissingKey missingKey, DeniedResponse deniedResponse, DeniedHandler deniedHandler,
      LogThrottle log) {
    this.limiter = limiter;
    this.pipeline = Expressions.pipeline(missingKey, log);
    this.rules = compile(rules, pipeline);
    this.matchAll = matchAll;
    this.clientIp = clientIp;
    this.headers = headers;
    this.deniedResponse = deniedResponse;
    this.deniedHandler = deniedHandler != null ? deniedHandler : new WritingHandler(headers);
    this.log = log;
    this.appliedAttribute = RateLimitFilter.class.getName() + ".applied." + INSTANCES.incrementAndGet();
  }

  /** A copy of {@code other} with other rules; it keeps the marker of counted requests. */
  private FilterEngine(FilterEngine other, List<RateLimitRule> rules) {
    this.limiter = other.limiter;
    this.pipeline = other.pipeline;
    this.rules = compile(rules, pipeline);
    this.matchAll = other.matchAll;
    this.clientIp = other.clientIp;
    this.headers = other.headers;
    this.deniedResponse = other.deniedResponse;
    this.deniedHandler = other.deniedHandler;
    this.log = other.log;
    this.appliedAttribute = other.appliedAttribute;
  }

  /**
   * This engine with {@code newRules} instead of its rules, everything else kept.
   *
   * @throws IllegalArgumentException as {@link RateLimitFilter.Builder#build()} for the same rules
   */
  FilterEngine withRules(List<RateLimitRule> newRules) {
    validate(newRules, matchAll);
    return new FilterEngine(this, newRules);
  }

  /** The rules' names, in order. */
  List<String> ruleNames() {
    List<String> names = new ArrayList<>(rules.size());
    for (CompiledRule rule : rules) {
      names.add(rule.rule.name());
    }
    return names;
  }

  /**
   * Checks that a rule set can make a filter.
   *
   * @throws IllegalArgumentException when there is no rule, two rules share a name, or with
   *     {@code matchAll} two rules share a policy name
   */
  static void validate(List<RateLimitRule> rules, boolean matchAll) {
    CompiledRule.validate(rules, matchAll);
  }


  private static List<CompiledRule> compile(List<RateLimitRule> rules, Pipeline pipeline) {
    List<CompiledRule> compiled = new ArrayList<>(rules.size());
    for (RateLimitRule rule : rules) {
      compiled.add(new CompiledRule(rule, pipeline, Expressions.VARIABLES, Expressions.COUNT_VARIABLES));
    }
    return List.copyOf(compiled);
  }

  void handle(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    if (request.getAttribute(appliedAttribute) != null) {
      chain.doFilter(request, response); // a forward, include, async or error dispatch: counted once
      return;
    }
    String path = Matching.pathWithinApplication(request);
    String method = request.getMethod();
    boolean preflight = Matching.isCorsPreflight(request);
    PathContainer container = Matching.container(path);
    PathContainer withoutSlash = path.length() > 1 && path.endsWith("/")
        ? Matching.container(path.substring(0, path.length() - 1)) : null;

    List<CompiledRule> matched = new ArrayList<>(2);
    List<Map<String, String>> pathVariables = new ArrayList<>(2);
    Expressions.RequestValues values = null; // made when first needed: a condition, or a matched rule's key
    for (CompiledRule rule : rules) {
      if (!rule.matchesMethod(method, preflight)) {
        continue;
      }
      Map<String, String> variables = rule.match(container, withoutSlash);
      if (variables != null && rule.hasConditions()) {
        if (values == null) {
          values = values(request, path, method);
        }
        if (!rule.applies(Expressions.context(values, variables, rule.conditionVariables))) {
          continue; // as if its path did not match
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
      chain.doFilter(request, response); // not marked: where it is forwarded (a filter mapped for FORWARD) may match
      return;
    }
    request.setAttribute(appliedAttribute, Boolean.TRUE);

    // every key and cost first, so that a rejected request consumes nothing anywhere
    if (values == null) {
      values = values(request, path, method);
    }
    String[] keys = new String[matched.size()];
    long[] costs = new long[matched.size()];
    for (int i = 0; i < matched.size(); i++) {
      CompiledRule rule = matched.get(i);
      EvaluationContext context = Expressions.context(values, pathVariables.get(i), rule.variables);
      keys[i] = rule.key.evaluate(context); // <rule>:<key>
      if (keys[i] == null) {
        rejectMissingKey(response, rule);
        return;
      }
      costs[i] = rule.cost.evaluate(context, rule.maxCost);
    }

    // one checkAll per matched rule (its key is its own), in rule order, stopping at a denial; a
    // rule with count-when only peeks now, and is charged after the response if its condition holds
    List<Decision> checked = new ArrayList<>();
    boolean allowed = true;
    boolean countAfter = false;
    RateLimitRule last = null;
    for (int i = 0; i < matched.size() && allowed; i++) {
      CompiledRule rule = matched.get(i);
      last = rule.rule;
      MultiDecision decision = rule.countWhen == null ? limiter.checkAll(keys[i], last.policies(), costs[i])
          : limiter.peekAll(keys[i], last.policies(), costs[i]);
      countAfter |= rule.countWhen != null;
      checked.addAll(decision.decisions());
      allowed = decision.allowed();
    }
    if (!RateLimitResponses.hasLimitHeaders(checked)) {
      log.warn(LOG, "degraded", "the rate limiter's backend failed; its failure mode decided "
          + (allowed ? "to allow" : "to deny") + " and no limit headers are sent");
    }
    if (allowed) {
      RateLimitResponses.writeHeaders(request, response, checked, headers);
    } else {
      RateLimitResponses.writeHeadersOfDenial(request, response, checked, headers);
      DeniedResponse configured = last.deniedResponse() != null ? last.deniedResponse() : deniedResponse;
      deniedHandler.handle(request, response, new MultiDecision(false, checked), configured);
      return;
    }
    if (!countAfter) {
      chain.doFilter(request, response);
      return;
    }
    Charge charge = new Charge(values, matched, pathVariables, keys, costs);
    boolean thrown = true;
    try {
      chain.doFilter(request, response);
      thrown = false;
    } finally {
      if (!thrown && request.isAsyncStarted()) {
        request.getAsyncContext().addListener(charge.whenComplete(response)); // the status is known then
      } else {
        // an exception leaving the chain becomes the container's 500, unless the response is already out
        charge.run(thrown && !response.isCommitted() ? HttpServletResponse.SC_INTERNAL_SERVER_ERROR
            : response.getStatus());
      }
    }
  }

  /**
   * What a request owes its {@code count-when} rules once its response is known: each rule whose
   * condition holds is charged with its key and cost (a {@code checkAll}, which consumes nothing
   * when another request took the room meanwhile). Never throws: the response is already made.
   */
  private final class Charge {
    private final Expressions.RequestValues values;
    private final List<CompiledRule> matched;
    private final List<Map<String, String>> pathVariables;
    private final String[] keys;
    private final long[] costs;

    Charge(Expressions.RequestValues values, List<CompiledRule> matched,
        List<Map<String, String>> pathVariables, String[] keys, long[] costs) {
      this.values = values;
      this.matched = matched;
      this.pathVariables = pathVariables;
      this.keys = keys;
      this.costs = costs;
    }

    void run(int status) {
      try {
        for (int i = 0; i < matched.size(); i++) {
          CompiledRule rule = matched.get(i);
          if (rule.countWhen == null) {
            continue;
          }
          EvaluationContext context = Expressions.context(values, pathVariables.get(i), rule.countVariables);
          context.setVariable("response", new Expressions.ResponseStatus(status));
          if (rule.countWhen.test(context)) {
            limiter.checkAll(keys[i], rule.rule.policies(), costs[i]);
          }
        }
      } catch (RuntimeException e) {
        log.warn(LOG, "count-when", "a request's count-when charge failed, and was not made: "
            + LogThrottle.sanitize(e));
      }
    }

    /** Charges when the asynchronous request completes, with the status it completed with. */
    AsyncListener whenComplete(HttpServletResponse response) {
      return new AsyncListener() {
        @Override
        public void onComplete(AsyncEvent event) {
          run(event.getSuppliedResponse() instanceof HttpServletResponse supplied ? supplied.getStatus()
              : response.getStatus());
        }

        @Override
        public void onTimeout(AsyncEvent event) {}

        @Override
        public void onError(AsyncEvent event) {}

        @Override
        public void onStartAsync(AsyncEvent event) {
          event.getAsyncContext().addListener(this); // started again: listen to the new cycle
        }
      };
    }
  }

  private String clientIpOf(HttpServletRequest request) {
    return clientIp.resolve(request, onForwardingIgnored);
  }

  private Expressions.RequestValues values(HttpServletRequest request, String path, String method) {
    return new Expressions.RequestValues(request, clientIpOf, path, method);
  }

  /** The default handler: writes the response configured for the denial. */
  private static final class WritingHandler implements DeniedHandler {
    private final HeaderOptions headers;

    WritingHandler(HeaderOptions headers) {
      this.headers = headers;
    }

    @Override
    public void handle(HttpServletRequest request, HttpServletResponse response, MultiDecision decision,
        DeniedResponse configured) throws IOException {
      configured.write(request, response, decision.decisions(), headers);
    }

    @Override
    public void handle(HttpServletRequest request, HttpServletResponse response, MultiDecision decision)
        throws IOException {
      handle(request, response, decision, DeniedResponse.PROBLEM_JSON);
    }
  }

  /** A local peer's forwarding headers were ignored: it is likely a proxy that is not declared trusted. */
  private void forwardingIgnored(String peer) {
    long suppressed = log.tryAcquire("forwarding-ignored");
    if (suppressed < 0) {
      return; // the line is built once a minute at most, not on every such request
    }
    LOG.log(System.Logger.Level.WARNING, "requests from " + peer + " carry X-Forwarded-For or Forwarded, but " + peer + " is not a"
        + " trusted proxy, so #clientIp is " + peer + " for them. If it is a proxy in front of the"
        + " application (a load balancer, ingress or reverse proxy), add its address or network to the"
        + " trusted proxies (ratelimit.trusted-proxies, RateLimitFilter.Builder#trustedProxies), or every"
        + " client behind it shares its keys; for #clientIp, these are the only proxies believed, whatever"
        + " server.forward-headers-strategy or the server's own settings trust" + log.note(suppressed));
  }

  private void rejectMissingKey(HttpServletResponse response, CompiledRule rule) throws IOException {
    if (response.isCommitted()) {
      return;
    }
    response.setStatus(HttpServletResponse.SC_BAD_REQUEST);
    response.setHeader("Cache-Control", "no-store");
    RateLimitResponses.writeBody(response, RateLimitResponses.PROBLEM_JSON,
        "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,\"detail\":"
            + RateLimitResponses.jsonString("The request lacks what rate limit '" + rule.rule.name()
                + "' is keyed on.") + "}");
  }
}

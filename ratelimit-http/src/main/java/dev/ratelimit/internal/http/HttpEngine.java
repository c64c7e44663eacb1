package dev.ratelimit.internal.http;

import dev.ratelimit.Decision;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.http.DeniedResponse;
import dev.ratelimit.http.HeaderOptions;
import dev.ratelimit.http.MissingKey;
import dev.ratelimit.http.RateLimitRule;
import dev.ratelimit.internal.LogThrottle;
import dev.ratelimit.internal.expression.Pipeline;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.springframework.expression.EvaluationContext;
import org.springframework.http.server.PathContainer;

/**
 * What both filters do per request, whatever the server API: match the rules, evaluate keys and
 * costs, check (sync or async), decide the answer, and settle {@code count-when} and {@code
 * cost-after} rules' reservations once the response is known. The adapters read their request into a {@link RequestView}, mark it counted,
 * and write what this decides on their response. Immutable: {@link #withRules} makes another.
 */
public final class HttpEngine {
  private static final AtomicLong INSTANCES = new AtomicLong();

  private final RateLimiter limiter;
  private final List<CompiledRule> rules;
  private final boolean readsPrincipal;
  private final boolean matchAll;
  private final ForwardedClient clientIp;
  private final HeaderOptions headers;
  private final DeniedResponse deniedResponse;
  private final RequestExpressions expressions;
  private final Pipeline pipeline;
  private final LogThrottle log;
  private final System.Logger logger;
  private final String builderName;
  private final String appliedAttribute;
  private final Consumer<String> onForwardingIgnored = this::forwardingIgnored;

  /**
   * @param logger the door's logger
   * @param builderName the door's builder, as log lines name it ({@code RateLimitFilter.Builder})
   * @throws IllegalArgumentException as {@link CompiledRule#validate} and {@link CompiledRule}'s
   *     constructor, for the rules
   */
  public HttpEngine(RateLimiter limiter, List<RateLimitRule> rules, boolean matchAll, List<String> trustedProxies,
      HeaderOptions headers, MissingKey missingKey, DeniedResponse deniedResponse, RequestExpressions expressions,
      System.Logger logger, String builderName, LogThrottle log) {
    this.limiter = limiter;
    this.matchAll = matchAll;
    this.clientIp = new ForwardedClient(trustedProxies);
    this.headers = headers;
    this.deniedResponse = deniedResponse;
    this.expressions = expressions;
    this.pipeline = expressions.pipeline(missingKey, log);
    this.log = log;
    this.logger = logger;
    this.builderName = builderName;
    this.appliedAttribute = logger.getName() + ".applied." + INSTANCES.incrementAndGet();
    this.rules = compile(rules);
    this.readsPrincipal = readsPrincipal(this.rules);
  }

  /** A copy of {@code other} with other rules; it keeps the marker of counted requests. */
  private HttpEngine(HttpEngine other, List<RateLimitRule> rules) {
    this.limiter = other.limiter;
    this.matchAll = other.matchAll;
    this.clientIp = other.clientIp;
    this.headers = other.headers;
    this.deniedResponse = other.deniedResponse;
    this.expressions = other.expressions;
    this.pipeline = other.pipeline;
    this.log = other.log;
    this.logger = other.logger;
    this.builderName = other.builderName;
    this.appliedAttribute = other.appliedAttribute;
    this.rules = compile(rules);
    this.readsPrincipal = readsPrincipal(this.rules);
  }

  /**
   * This engine with {@code newRules} instead of its rules, everything else kept.
   *
   * @throws IllegalArgumentException as the constructor, for the same rules
   */
  public HttpEngine withRules(List<RateLimitRule> newRules) {
    return new HttpEngine(this, List.copyOf(newRules));
  }

  private List<CompiledRule> compile(List<RateLimitRule> list) {
    CompiledRule.validate(list, matchAll);
    List<CompiledRule> compiled = new ArrayList<>(list.size());
    for (RateLimitRule rule : list) {
      if ((rule.countWhen() != null || rule.costAfter() != null) && !limiter.takesReservations()) {
        String part = rule.countWhen() != null ? "count-when" : "cost-after";
        throw new IllegalArgumentException("rule '" + rule.name() + "' has " + part + ", which reserves its cost"
            + " before the request and settles it after; the limiter " + limiter + " does not take reservations"
            + " (RateLimiter.takesReservations() is false: a Backend whose reserves() is false); use the in-memory"
            + " or the Redis backend, or drop " + part);
      }
      compiled.add(new CompiledRule(rule, pipeline, expressions.variables(), expressions.countVariables()));
    }
    return List.copyOf(compiled);
  }

  private static boolean readsPrincipal(List<CompiledRule> rules) {
    for (CompiledRule c : rules) {
      if (c.variables.contains("principal") || c.conditionVariables.contains("principal")
          || c.countVariables.contains("principal")) {
        return true;
      }
    }
    return false;
  }

  /** The rules' names, in order. */
  public List<String> ruleNames() {
    List<String> names = new ArrayList<>(rules.size());
    for (CompiledRule rule : rules) {
      names.add(rule.rule.name());
    }
    return names;
  }

  /** Whether a rule reads {@code #principal}: a door that resolves it at a cost does so only then. */
  public boolean readsPrincipal() {
    return readsPrincipal;
  }

  /** The name of the request attribute that marks a request as counted by this filter. */
  public String appliedAttribute() {
    return appliedAttribute;
  }

  /** The limit headers to send. */
  public HeaderOptions headers() {
    return headers;
  }

  /**
   * The client's address of a request: {@link ForwardedClient#resolve}, warning (at most once a
   * minute) when a local peer's forwarding headers were not believed.
   */
  public String clientIp(String remoteAddr, List<String> forwardedFor, List<String> forwarded) {
    return clientIp.resolve(remoteAddr, forwardedFor, forwarded, onForwardingIgnored);
  }

  /**
   * What the rules make of a request: null when none matches (the request passes, unmarked), else
   * the matched rules with their keys and costs, all evaluated before anything is counted.
   *
   * @param method the request's method
   * @param preflight whether it is a CORS preflight
   * @param path its path within the application, as matched
   * @param withoutSlash the same without its trailing slash; null when it has none
   * @param view the request's values, which the expressions read
   */
  public Plan plan(String method, boolean preflight, PathContainer path, PathContainer withoutSlash,
      RequestView view) {
    List<CompiledRule> matched = null;
    List<Map<String, String>> pathVariables = null;
    for (CompiledRule rule : rules) {
      if (!rule.matchesMethod(method, preflight)) {
        continue;
      }
      Map<String, String> variables = rule.match(path, withoutSlash);
      if (variables == null) {
        continue;
      }
      if (rule.hasConditions()
          && !rule.applies(expressions.context(view, variables, rule.conditionVariables))) {
        continue; // as if its path did not match
      }
      if (matched == null) {
        matched = new ArrayList<>(2);
        pathVariables = new ArrayList<>(2);
      }
      matched.add(rule);
      pathVariables.add(variables);
      if (!matchAll) {
        break;
      }
    }
    return matched == null ? null : new Plan(view, matched, pathVariables);
  }

  /**
   * The 400 problem body of a request that lacks what {@code rule} is keyed on
   * ({@link MissingKey#REJECT}), sent with {@code Cache-Control: no-store}.
   */
  public static String missingKeyBody(CompiledRule rule) {
    return "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,\"detail\":"
        + LimitHeaders.jsonString("The request lacks what rate limit '" + rule.rule.name() + "' is keyed on.") + "}";
  }

  /**
   * One request's matched rules, their keys and costs: what is checked now; for {@code count-when}
   * and {@code cost-after} rules, reserved now and settled once the response is known (committed
   * at the actual cost when the condition holds, cancelled otherwise), so requests in flight at
   * once never pass beyond the limit.
   */
  public final class Plan {
    private final RequestView view;
    private final List<CompiledRule> matched;
    private final List<Map<String, String>> pathVariables;
    private final String[] keys;
    private final long[] costs;
    /** The settled-after rules' reservations taken for this request, null where none is held. */
    private final Reservation[] held;
    private final CompiledRule missingKey;

    private Plan(RequestView view, List<CompiledRule> matched, List<Map<String, String>> pathVariables) {
      this.view = view;
      this.matched = matched;
      this.pathVariables = pathVariables;
      this.keys = new String[matched.size()];
      this.costs = new long[matched.size()];
      this.held = new Reservation[matched.size()];
      CompiledRule missing = null;
      for (int i = 0; i < keys.length; i++) {
        CompiledRule rule = matched.get(i);
        EvaluationContext context = expressions.context(view, pathVariables.get(i), rule.variables);
        keys[i] = rule.key.evaluate(context); // <rule>:<key>
        if (keys[i] == null) {
          missing = rule;
          break;
        }
        costs[i] = rule.cost.evaluate(context, rule.maxCost);
      }
      this.missingKey = missing;
    }

    /** The rule whose key the request lacks, to be answered 400; null when every key is there. */
    public CompiledRule missingKey() {
      return missingKey;
    }

    /** How many rules are checked, one after the other until a denial. */
    public int size() {
      return matched.size();
    }

    /**
     * Rule {@code i}'s check, blocking: charged now, or with {@code count-when} or {@code cost-after}
     * reserved until {@link #settle}.
     */
    public MultiDecision check(int i) {
      CompiledRule rule = matched.get(i);
      if (!rule.settledAfter()) {
        return limiter.checkAll(keys[i], rule.rule.policies(), costs[i]);
      }
      Reservation reservation = limiter.reserve(keys[i], rule.rule.policies(), costs[i]);
      held[i] = reservation.allowed() ? reservation : null;
      return reservation.decisions();
    }

    /** {@link #check} without blocking: a plain rule's charge, or a settled-after rule's reservation. */
    public CompletionStage<MultiDecision> checkAsync(int i) {
      CompiledRule rule = matched.get(i);
      if (!rule.settledAfter()) {
        return limiter.checkAllAsync(keys[i], rule.rule.policies(), costs[i]);
      }
      return limiter.reserveAsync(keys[i], rule.rule.policies(), costs[i]).thenApply(reservation -> {
        held[i] = reservation.allowed() ? reservation : null;
        return reservation.decisions();
      });
    }

    /** Every rule checked in order, stopping at a denial, blocking; then the {@link #verdict}. */
    public Verdict checkAll() {
      List<MultiDecision> results = new ArrayList<>(matched.size());
      for (int i = 0; i < matched.size(); i++) {
        MultiDecision decision = check(i);
        results.add(decision);
        if (!decision.allowed()) {
          break;
        }
      }
      return verdict(results);
    }

    /**
     * What the request gets, from the checks made: the first {@code results.size()} rules', the
     * last of which denied unless all were allowed.
     */
    public Verdict verdict(List<MultiDecision> results) {
      List<Decision> checked = new ArrayList<>();
      boolean countAfter = false;
      for (int i = 0; i < results.size(); i++) {
        checked.addAll(results.get(i).decisions());
        countAfter |= matched.get(i).settledAfter();
      }
      boolean allowed = results.get(results.size() - 1).allowed();
      if (!LimitHeaders.hasLimitHeaders(checked)) {
        log.warn(logger, "degraded", "the rate limiter's backend failed; its failure mode decided "
            + (allowed ? "to allow" : "to deny") + " and no limit headers are sent");
      }
      DeniedResponse denied = null;
      if (!allowed) {
        RateLimitRule rule = matched.get(results.size() - 1).rule;
        denied = rule.deniedResponse() != null ? rule.deniedResponse() : deniedResponse;
      }
      return new Verdict(allowed, checked, countAfter, denied);
    }

    /**
     * Settles each reservation this request holds, once its {@code response} is known: committed
     * when the rule's {@code count-when} holds (or it has none, or it cannot be evaluated: the
     * request ran), at the {@code cost-after} it gives (its estimate when it has none or it fails),
     * cancelled otherwise. Blocking; never throws: the response is already made.
     */
    public void settle(ResponseView response) {
      for (int i = 0; i < held.length; i++) {
        Reservation reservation = held[i];
        if (reservation == null) {
          continue;
        }
        held[i] = null;
        long actual = actualCost(i, response);
        if (actual == 0) {
          reservation.cancel(); // not counted, or it cost nothing
        } else {
          reservation.commit(actual);
        }
      }
    }

    /** {@link #settle} without blocking; the stage completes, never exceptionally, once every settle has. */
    public CompletionStage<Void> settleAsync(ResponseView response) {
      List<CompletableFuture<Void>> settles = new ArrayList<>(held.length);
      for (int i = 0; i < held.length; i++) {
        Reservation reservation = held[i];
        if (reservation == null) {
          continue;
        }
        held[i] = null;
        long actual = actualCost(i, response);
        settles.add((actual == 0 ? reservation.cancelAsync() : reservation.commitAsync(actual)).toCompletableFuture());
      }
      return CompletableFuture.allOf(settles.toArray(CompletableFuture[]::new));
    }

    /**
     * What rule {@code i}'s reservation is settled at: 0 when {@code count-when} is false (or
     * {@code cost-after} gives 0), else {@code cost-after}'s cost, or the estimate when it has none
     * or it fails; a {@code count-when} that fails counts the request.
     */
    private long actualCost(int i, ResponseView response) {
      CompiledRule rule = matched.get(i);
      EvaluationContext context = expressions.context(view, pathVariables.get(i), rule.countVariables);
      context.setVariable("response", response);
      boolean counts = true;
      try {
        counts = rule.countWhen == null || rule.countWhen.test(context);
      } catch (RuntimeException e) {
        countWhenFailed(e);
      }
      if (!counts) {
        return 0;
      }
      long actual = rule.costAfter == null ? costs[i] : rule.costAfter.actual(context);
      return actual < 0 ? costs[i] : actual; // -1: cost-after failed, the estimate stays
    }

    /**
     * Cancels the reservations this request holds: it was refused by a later rule, so what it
     * reserved is given back. Blocking; never throws.
     */
    public void release() {
      for (int i = 0; i < held.length; i++) {
        if (held[i] != null) {
          held[i].cancel();
          held[i] = null;
        }
      }
    }

    /** {@link #release} without blocking; the stage completes, never exceptionally, once every cancel has. */
    public CompletionStage<Void> releaseAsync() {
      List<CompletableFuture<Void>> cancels = new ArrayList<>(held.length);
      for (int i = 0; i < held.length; i++) {
        if (held[i] != null) {
          cancels.add(held[i].cancelAsync().toCompletableFuture());
          held[i] = null;
        }
      }
      return CompletableFuture.allOf(cancels.toArray(CompletableFuture[]::new));
    }

    /** Whether this request holds a reservation to {@link #settle} or {@link #release}. */
    public boolean holds() {
      for (Reservation reservation : held) {
        if (reservation != null) {
          return true;
        }
      }
      return false;
    }

    private void countWhenFailed(Throwable e) {
      log.warn(logger, "count-when", "a request's count-when condition failed; the request is counted: "
          + LogThrottle.sanitize(e));
    }
  }

  /**
   * What a checked request gets.
   *
   * @param allowed whether it passes
   * @param checked every decision made for it, which the limit headers describe
   * @param countAfter whether a {@code count-when} or {@code cost-after} rule was reserved: settled once the response is
   *     known ({@link Plan#settle}), or released when the request is refused ({@link Plan#release})
   * @param deniedResponse what a denied request is answered with: its rule's, else the filter's;
   *     null when allowed
   */
  public record Verdict(boolean allowed, List<Decision> checked, boolean countAfter, DeniedResponse deniedResponse) {
    /** {@link #checked} as the denial handlers take it. */
    public MultiDecision decision() {
      return new MultiDecision(allowed, checked);
    }
  }

  /** A local peer's forwarding headers were ignored: it is likely a proxy that is not declared trusted. */
  private void forwardingIgnored(String peer) {
    long suppressed = log.tryAcquire("forwarding-ignored");
    if (suppressed < 0) {
      return; // the line is built once a minute at most, not on every such request
    }
    logger.log(System.Logger.Level.WARNING, "requests from " + peer + " carry X-Forwarded-For or Forwarded, but "
        + peer + " is not a trusted proxy, so #clientIp is " + peer + " for them. If it is a proxy in front of the"
        + " application (a load balancer, ingress or reverse proxy), add its address or network to the"
        + " trusted proxies (ratelimit.trusted-proxies, " + builderName + "#trustedProxies), or every"
        + " client behind it shares its keys; for #clientIp, these are the only proxies believed, whatever"
        + " server.forward-headers-strategy or the server's own settings trust" + log.note(suppressed));
  }
}

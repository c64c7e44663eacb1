package dev.ratelimit.http;

import dev.ratelimit.Policy;
import dev.ratelimit.Require;
import dev.ratelimit.internal.http.CompiledRule;
import dev.ratelimit.internal.http.RuleChecks;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Which requests a limit applies to and how they are counted.
 *
 * <pre>{@code
 * RateLimitRule api = RateLimitRule.builder("api")
 *     .path("/api/**")
 *     .method("GET", "POST")
 *     .policy(Policy.parse("100/1m").withName("per-ip"))
 *     .key("#clientIp")                        // the default
 *     .build();
 * }</pre>
 *
 * <p>A request matches when its method is one of {@code methods} (all when empty, but a CORS
 * preflight only when {@code OPTIONS} is named; {@code GET} covers {@code HEAD} too, since servlets
 * answer HEAD with {@code doGet}) and its path within the
 * application, as the container canonicalised it, matches one of {@code paths} in
 * {@link org.springframework.web.util.pattern.PathPattern} syntax ({@code /api/**},
 * {@code /users/{id}}); a trailing slash on the request path is ignored. The policies are checked
 * together, all or nothing, under the limiter key {@code <name>:<key>}, so rules never share
 * counters.
 *
 * <p>{@code key} and {@code cost} are SpEL expressions, parsed once, evaluated per request in a
 * sandbox (no type references, constructors, method calls or assignments; properties only of the
 * request, principal and cookies), with these variables:
 * <ul>
 *   <li>{@code #clientIp}: the client address (the peer, or behind trusted proxies only what they forwarded);</li>
 *   <li>{@code #clientNetwork}: an IPv6 client's {@code /64}, an IPv4 client's address
 *       ({@code ClientIp.network} of the servlet filter);</li>
 *   <li>{@code #path}, {@code #method}: the path within the application and the method;</li>
 *   <li>{@code #headers['X-Api-Key']}, {@code #params['page']}: the first value of a request header
 *       (case-insensitive) or of a query parameter (the body is never read);</li>
 *   <li>{@code #pathVariables['id']}: what the matched path pattern captured;</li>
 *   <li>{@code #principal}: the authenticated user's name, or null;</li>
 *   <li>{@code #request}: the request, whose side-effect-free properties can be read
 *       ({@code #request.remoteUser}, {@code #request.serverName}, ...).</li>
 * </ul>
 * {@code when} and {@code skipWhen} are conditions on the same variables: the rule applies to a
 * request only when {@code when} (if given) is true and {@code skipWhen} (if given) is false, as
 * if its path did not match otherwise (with first-match, the next rule is tried). A condition
 * that fails or gives anything but a boolean never fails the request: the rule applies, the safe
 * side for a limiter, with a log line at most once a minute.
 *
 * <p>{@code countWhen} is a condition on the same variables and {@code #response} ({@code
 * #response.status}, {@code #response.headers['X-Name']}): with it, a request's cost is reserved
 * before it proceeds ({@link dev.ratelimit.RateLimiter#reserve reserve}: refused exactly when a
 * check of that cost would be) and, once the response is known, committed when the condition holds
 * (count only failed logins: {@code #response.status == 401}) and given back otherwise. Requests in
 * flight at once never pass beyond the limit: a request in flight holds its cost until it ends, so
 * it may refuse another that would not have counted. An uncaught exception from the chain is
 * status 500. A condition that fails or gives no boolean counts the request.
 *
 * <p>{@code costAfter} is the actual cost, an expression on the same variables and {@code
 * #response}, such as {@code #response.headers['X-Tokens-Used']}: with it, {@code cost} is the
 * estimate reserved before the request, and the reservation is committed at what {@code costAfter}
 * gives once the response is known: the surplus is given back, a larger cost charged beyond the
 * limit (the work was done; later requests pay the debt). It must give a whole number from 0 to
 * 2^52, a fraction rounded up; anything else (absent, not a number, an error) keeps the estimate,
 * with a log line at most once a minute. With both, {@code countWhen} decides whether the request
 * counts and {@code costAfter} how much.
 * The key defaults to {@code #clientIp}. It must give a text, a number, a boolean, a character, an
 * enum, a UUID, or a collection or map of them; null, blank, anything else or an error is a missing
 * key, which never bypasses the limit (see {@link MissingKey}). The cost defaults to {@code 1}; it
 * must give a number from 1 to the smallest capacity of the rule's policies, a fraction rounded up:
 * a larger one is charged as that capacity, and anything else (below 1, not a number, an error) as
 * 1, with a log line at most once a minute.
 *
 * @param name the rule's name: letters, digits, {@code . _ -}, at most 64, starting with a letter
 *     or digit; the first part of every limiter key of the rule
 * @param paths path patterns, at least one
 * @param methods HTTP methods in upper case; empty for all
 * @param policies the policies, at least one, with distinct names of printable ASCII (the limit
 *     headers name them in structured-field strings: see {@link PolicyNames})
 * @param key the SpEL expression of the key
 * @param cost the SpEL expression of the cost
 * @param deniedResponse what a request this rule denies is answered with; null for the filter's
 *     (its builder's {@code deniedResponse}, by default {@link DeniedResponse#PROBLEM_JSON})
 * @param when the SpEL condition under which the rule applies; null for always
 * @param skipWhen the SpEL condition under which the rule does not apply; null for never
 * @param countWhen the SpEL condition, read after the response, under which a request is charged;
 *     null to charge every request before it proceeds
 * @param costAfter the SpEL expression, read after the response, of the request's actual cost;
 *     null to charge {@code cost}
 */
public record RateLimitRule(String name, List<String> paths, Set<String> methods, List<Policy> policies,
    String key, String cost, DeniedResponse deniedResponse, String when, String skipWhen, String countWhen,
    String costAfter) {

  /** The default key expression: the client's address. */
  public static final String DEFAULT_KEY = "#clientIp";
  /** The default cost expression. */
  public static final String DEFAULT_COST = "1";


  /**
   * Validates and copies; a null key or cost takes the default.
   *
   * @throws IllegalArgumentException naming the rule and the bad value: a bad name, no path or a
   *     path that does not parse, a bad method, no policy or two with one name, a policy name
   *     outside printable ASCII, a key, cost or condition that does not parse or uses what the
   *     sandbox refuses, a condition that is a constant but no boolean
   */
  public RateLimitRule {
    RuleChecks.ruleName(name);
    Objects.requireNonNull(paths, "paths");
    Require.argument(!paths.isEmpty(), "rule '%s' needs at least one path (/** for all)", name);
    for (String path : paths) {
      CompiledRule.parsePattern(name, path);
    }
    paths = List.copyOf(paths);
    Objects.requireNonNull(methods, "methods");
    Set<String> upper = new LinkedHashSet<>();
    for (String method : methods) {
      upper.add(RuleChecks.method(name, method));
    }
    methods = Collections.unmodifiableSet(upper);
    Objects.requireNonNull(policies, "policies");
    Require.argument(!policies.isEmpty(), "rule '%s' needs at least one policy", name);
    Set<String> policyNames = new HashSet<>();
    for (Policy policy : policies) {
      Objects.requireNonNull(policy, "policy");
      PolicyNames.requireFitsHeader(policy.name(), "rule '" + name + "'");
      Require.argument(policyNames.add(policy.name()),
          "rule '%s': policy name '%s' appears twice; each policy of a rule needs its own name", name,
          policy.name());
    }
    policies = List.copyOf(policies);
    key = key == null ? DEFAULT_KEY : key;
    cost = cost == null ? DEFAULT_COST : cost;
    RuleChecks.expression(key, "rule '" + name + "': key");
    RuleChecks.expression(cost, "rule '" + name + "': cost");
    if (when != null) {
      RuleChecks.condition(when, "rule '" + name + "': when", false);
    }
    if (skipWhen != null) {
      RuleChecks.condition(skipWhen, "rule '" + name + "': skip-when", false);
    }
    if (countWhen != null) {
      RuleChecks.condition(countWhen, "rule '" + name + "': count-when", true);
    }
    if (costAfter != null) {
      RuleChecks.actualCost(costAfter, "rule '" + name + "': cost-after");
    }
  }

  /** A rule whose cost is known before the request ({@code costAfter} null). */
  public RateLimitRule(String name, List<String> paths, Set<String> methods, List<Policy> policies, String key,
      String cost, DeniedResponse deniedResponse, String when, String skipWhen, String countWhen) {
    this(name, paths, methods, policies, key, cost, deniedResponse, when, skipWhen, countWhen, null);
  }

  /** A rule without conditions. */
  public RateLimitRule(String name, List<String> paths, Set<String> methods, List<Policy> policies, String key,
      String cost, DeniedResponse deniedResponse) {
    this(name, paths, methods, policies, key, cost, deniedResponse, null, null, null, null);
  }

  /** A rule without conditions, answering denied requests as the filter does (no {@link #deniedResponse() response} of its own). */
  public RateLimitRule(String name, List<String> paths, Set<String> methods, List<Policy> policies, String key,
      String cost) {
    this(name, paths, methods, policies, key, cost, null);
  }

  /** A builder for a rule named {@code name}. */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  /** The smallest capacity of the rule's policies: the largest cost one request can be charged. */
  public long maxCost() {
    long max = Long.MAX_VALUE;
    for (Policy policy : policies) {
      max = Math.min(max, policy.capacity());
    }
    return max;
  }

  /** Builds a {@link RateLimitRule}. Not thread-safe. */
  public static final class Builder {
    private final String name;
    private final List<String> paths = new ArrayList<>();
    private final Set<String> methods = new LinkedHashSet<>();
    private final List<Policy> policies = new ArrayList<>();
    private String key = DEFAULT_KEY;
    private String cost = DEFAULT_COST;
    private DeniedResponse deniedResponse;
    private String when;
    private String skipWhen;
    private String countWhen;
    private String costAfter;

    private Builder(String name) {
      this.name = name;
    }

    /** Adds path patterns, such as {@code /api/**} or {@code /users/{id}}. */
    public Builder path(String... patterns) {
      paths.addAll(List.of(patterns));
      return this;
    }

    /** Adds HTTP methods; none means every method. */
    public Builder method(String... names) {
      methods.addAll(List.of(names));
      return this;
    }

    /** Adds a policy; the rule's policies are checked together, all or nothing. */
    public Builder policy(Policy policy) {
      policies.add(Objects.requireNonNull(policy, "policy"));
      return this;
    }

    /** The key's SpEL expression; default {@value RateLimitRule#DEFAULT_KEY}. */
    public Builder key(String spel) {
      this.key = spel;
      return this;
    }

    /** The cost's SpEL expression; default {@value RateLimitRule#DEFAULT_COST}. */
    public Builder cost(String spel) {
      this.cost = spel;
      return this;
    }

    /** What a request this rule denies is answered with; default the filter's. */
    public Builder deniedResponse(DeniedResponse response) {
      this.deniedResponse = Objects.requireNonNull(response, "deniedResponse");
      return this;
    }

    /**
     * The condition under which the rule applies, in SpEL on the key's variables, such as
     * {@code #headers['X-Tenant'] != null}; default always.
     */
    public Builder when(String spel) {
      this.when = spel;
      return this;
    }

    /**
     * The condition under which the rule does not apply, in SpEL on the key's variables, such as
     * {@code #path == '/health' or #clientIp == '10.0.0.7'}; default never.
     */
    public Builder skipWhen(String spel) {
      this.skipWhen = spel;
      return this;
    }

    /**
     * The condition, read after the response, under which a request is charged, in SpEL on the
     * key's variables and {@code #response}, such as {@code #response.status == 401}; default every
     * request is charged before it proceeds. See the class comment.
     */
    public Builder countWhen(String spel) {
      this.countWhen = spel;
      return this;
    }

    /**
     * The actual cost, read after the response, in SpEL on the key's variables and {@code
     * #response}, such as {@code #response.headers['X-Tokens-Used']}; {@link #cost} is then the
     * estimate reserved before the request. Default: {@code cost} is charged. See the class comment.
     */
    public Builder costAfter(String spel) {
      this.costAfter = spel;
      return this;
    }

    /**
     * The rule.
     *
     * @throws IllegalArgumentException as the record's constructor
     */
    public RateLimitRule build() {
      return new RateLimitRule(name, paths, methods, policies, key, cost, deniedResponse, when, skipWhen, countWhen,
          costAfter);
    }
  }
}

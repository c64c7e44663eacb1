package dev.ratelimit.internal.http;

import dev.ratelimit.internal.expression.Pipeline;
import dev.ratelimit.internal.expression.Variables;
import dev.ratelimit.http.RateLimitRule;
import dev.ratelimit.Require;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PatternParseException;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * A filter rule ready to match a request, for the servlet and the reactive filter alike: its
 * patterns parsed, its methods normalised, its expressions parsed once in the door's sandbox.
 */
public final class CompiledRule {
  private static final PathPatternParser PARSER = new PathPatternParser();

  /**
   * Parses a rule's path pattern.
   *
   * @throws IllegalArgumentException naming the rule and the path
   */
  public static PathPattern parsePattern(String rule, String path) {
    if (path == null || !path.startsWith("/")) {
      throw new IllegalArgumentException("rule '" + rule + "': path '" + path
          + "' must start with '/', e.g. /api/** or /users/{id}");
    }
    try {
      return PARSER.parse(path);
    } catch (PatternParseException e) {
      throw new IllegalArgumentException("rule '" + rule + "': path '" + path + "' does not parse: "
          + e.toDetailedString().replace('\n', ' '), e);
    }
  }

  /**
   * The path as a {@link PathContainer} whose segments are exactly the decoded segments: a
   * {@code %} or {@code ;} in them is escaped, so that nothing is decoded twice or read as a
   * path parameter.
   */
  public static PathContainer container(String decodedPath) {
    StringBuilder sb = null;
    for (int i = 0; i < decodedPath.length(); i++) {
      char c = decodedPath.charAt(i);
      if (c == '%' || c == ';') {
        if (sb == null) {
          sb = new StringBuilder(decodedPath.length() + 8).append(decodedPath, 0, i);
        }
        sb.append(c == '%' ? "%25" : "%3B");
      } else if (sb != null) {
        sb.append(c);
      }
    }
    return PathContainer.parsePath(sb == null ? decodedPath : sb.toString());
  }

  /**
   * Checks that a rule set can make a filter.
   *
   * @throws IllegalArgumentException when there is no rule, two rules share a name, or with
   *     {@code matchAll} two rules share a policy name
   */
  public static void validate(List<RateLimitRule> rules, boolean matchAll) {
    Require.argument(rules != null && !rules.isEmpty(), "a RateLimitFilter needs at least one rule");
    Set<String> names = new HashSet<>();
    Map<String, String> policyOwners = new HashMap<>();
    for (RateLimitRule rule : rules) {
      Objects.requireNonNull(rule, "rule");
      Require.argument(names.add(rule.name()),
          "rule name '%s' appears twice; rules need distinct names, which namespace their keys", rule.name());
      if (matchAll) {
        for (var policy : rule.policies()) {
          String owner = policyOwners.putIfAbsent(policy.name(), rule.name());
          Require.argument(owner == null,
              "policy name '%s' is used by rules '%s' and '%s'; with matchAll, policy names must be "
                  + "distinct across rules so that limit headers name each policy once",
              policy.name(), owner, rule.name());
        }
      }
    }
  }
  public final RateLimitRule rule;
  public final List<PathPattern> patterns;
  public final Set<String> methods;
  public final Pipeline.Key key;
  public final Pipeline.Cost cost;
  /** The most one request can be charged: the smallest capacity of the rule's policies. */
  public final long maxCost;
  /** The variables the key and cost expressions use: only these are computed per request. */
  public final Set<String> variables;
  /** The rule's conditions, null when it has none. */
  public final Pipeline.Condition when;
  public final Pipeline.Condition skipWhen;
  /** The variables the conditions use. */
  public final Set<String> conditionVariables;
  /** The condition under which a request is charged after its response; null: charged before. */
  public final Pipeline.Condition countWhen;
  /** The actual cost, read after the response; null: the cost is known before. */
  public final Pipeline.Cost costAfter;
  /**
   * The variables {@link #countWhen} and {@link #costAfter} use, {@code #response} aside (set once
   * the response is known).
   */
  public final Set<String> countVariables;

  /**
   * Compiles {@code rule}: its paths parsed, its expressions checked against {@code names} (the
   * door's variables for the key, cost and conditions) and {@code countNames} (count-when's and
   * cost-after's) and
   * parsed with {@code pipeline}.
   *
   * @throws IllegalArgumentException naming the rule, for what the variables or sandbox refuse
   */
  public CompiledRule(RateLimitRule rule, Pipeline pipeline, Variables names, Variables countNames) {
    this.rule = rule;
    List<PathPattern> parsed = new ArrayList<>();
    for (String path : rule.paths()) {
      parsed.add(parsePattern(rule.name(), path));
    }
    this.patterns = List.copyOf(parsed);
    Set<String> m = new java.util.HashSet<>(rule.methods());
    if (m.contains("GET")) {
      m.add("HEAD"); // servlets and WebFlux answer HEAD as GET: the same work, the same limit
    }
    this.methods = Set.copyOf(m);
    String what = "rule '" + rule.name() + "'";
    this.key = pipeline.key(rule.key(), what, names, rule.name() + ":");
    this.cost = pipeline.cost(rule.cost(), what, names);
    Set<String> used = new java.util.HashSet<>(key.variables());
    used.addAll(cost.variables());
    this.variables = Set.copyOf(used);
    this.maxCost = rule.maxCost();
    // a condition that cannot be decided leaves the rule applying: the safe side for a limiter
    this.when = rule.when() == null ? null
        : pipeline.condition(rule.when(), what + ": when", names, true, "the rule applied");
    this.skipWhen = rule.skipWhen() == null ? null
        : pipeline.condition(rule.skipWhen(), what + ": skip-when", names, false, "the rule applied");
    Set<String> conditions = new java.util.HashSet<>();
    if (when != null) {
      conditions.addAll(when.variables());
    }
    if (skipWhen != null) {
      conditions.addAll(skipWhen.variables());
    }
    this.conditionVariables = Set.copyOf(conditions);
    // a count-when that cannot be decided counts the request: the safe side for a limiter
    this.countWhen = rule.countWhen() == null ? null : pipeline.condition(rule.countWhen(), what + ": count-when",
        countNames, true, "the request was counted");
    this.costAfter = rule.costAfter() == null ? null : pipeline.cost(rule.costAfter(), what + ": cost-after",
        countNames);
    Set<String> counting = new java.util.HashSet<>(countWhen == null ? Set.of() : countWhen.variables());
    if (costAfter != null) {
      counting.addAll(costAfter.variables());
    }
    counting.remove("response");
    this.countVariables = Set.copyOf(counting);
  }

  /** Whether the rule reserves its cost before the request and settles it after ({@code count-when}, {@code cost-after}). */
  public boolean settledAfter() {
    return countWhen != null || costAfter != null;
  }

  /** Whether the rule has a condition to test before it applies. */
  public boolean hasConditions() {
    return when != null || skipWhen != null;
  }

  /** Whether the conditions let the rule apply, in {@code context} (holding {@link #conditionVariables}). */
  public boolean applies(org.springframework.expression.EvaluationContext context) {
    return (when == null || when.test(context)) && (skipWhen == null || !skipWhen.test(context));
  }

  /**
   * Whether the rule applies to {@code method}: one it names, or any when it names none, but a CORS
   * preflight (the browser asking before a call) only when it names OPTIONS.
   */
  public boolean matchesMethod(String method, boolean preflight) {
    return methods.isEmpty() ? !preflight : methods.contains(method.toUpperCase(Locale.ROOT));
  }

  /**
   * The variables captured by the first pattern that matches {@code path} (or, when it ends
   * with a slash, {@code withoutSlash}); null when none does.
   */
  public Map<String, String> match(PathContainer path, PathContainer withoutSlash) {
    for (PathPattern pattern : patterns) {
      PathPattern.PathMatchInfo info = pattern.matchAndExtract(path);
      if (info == null && withoutSlash != null) {
        info = pattern.matchAndExtract(withoutSlash);
      }
      if (info != null) {
        return info.getUriVariables();
      }
    }
    return null;
  }
}

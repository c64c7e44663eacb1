package dev.ratelimit.servlet;

import jakarta.servlet.http.HttpServletRequest;
import dev.ratelimit.internal.expression.Pipeline;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PatternParseException;
import org.springframework.web.util.pattern.PathPatternParser;

/** Which rules a request matches: its canonical path against path patterns, its method. */
final class Matching {
  private static final PathPatternParser PARSER = new PathPatternParser();

  private Matching() {}

  /**
   * Parses a rule's path pattern.
   *
   * @throws IllegalArgumentException naming the rule and the path
   */
  static PathPattern parsePattern(String rule, String path) {
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
   * The path within the application as the container canonicalised it (decoded, dot segments
   * and path parameters removed): servlet path plus path info, which is what the container
   * routed by. The raw request URI is not used, so that {@code /%61pi} or {@code /api;x/..} name
   * the resource they reach.
   */
  /** A CORS preflight: {@code OPTIONS} with {@code Origin} and {@code Access-Control-Request-Method}. */
  static boolean isCorsPreflight(HttpServletRequest request) {
    return "OPTIONS".equals(request.getMethod()) && request.getHeader("Origin") != null
        && request.getHeader("Access-Control-Request-Method") != null;
  }

  static String pathWithinApplication(HttpServletRequest request) {
    String servletPath = request.getServletPath();
    String pathInfo = request.getPathInfo();
    String path = (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
    return path.isEmpty() ? "/" : path;
  }

  /**
   * The path as a {@link PathContainer} whose segments are exactly the decoded segments: a
   * {@code %} or {@code ;} in them is escaped, so that nothing is decoded twice or read as a
   * path parameter.
   */
  static PathContainer container(String decodedPath) {
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

  /** A rule ready to match: its patterns parsed, its methods normalised. */
  static final class CompiledRule {
    final RateLimitRule rule;
    final List<PathPattern> patterns;
    final Set<String> methods;
    final Pipeline.Key key;
    final Pipeline.Cost cost;
    /** The most one request can be charged: the smallest capacity of the rule's policies. */
    final long maxCost;
    /** The variables the key and cost expressions use: only these are computed per request. */
    final Set<String> variables;
    /** The rule's conditions, null when it has none. */
    final Pipeline.Condition when;
    final Pipeline.Condition skipWhen;
    /** The variables the conditions use. */
    final Set<String> conditionVariables;
    /** The condition under which a request is charged after its response; null: charged before. */
    final Pipeline.Condition countWhen;
    /** The variables {@link #countWhen} uses, {@code #response} aside (set once the response is known). */
    final Set<String> countVariables;

    CompiledRule(RateLimitRule rule, Pipeline pipeline) {
      this.rule = rule;
      List<PathPattern> parsed = new ArrayList<>();
      for (String path : rule.paths()) {
        parsed.add(parsePattern(rule.name(), path));
      }
      this.patterns = List.copyOf(parsed);
      Set<String> m = new java.util.HashSet<>(rule.methods());
      if (m.contains("GET")) {
        m.add("HEAD"); // servlets answer HEAD with doGet: the same work, the same limit
      }
      this.methods = Set.copyOf(m);
      String what = "rule '" + rule.name() + "'";
      this.key = pipeline.key(rule.key(), what, Expressions.VARIABLES, rule.name() + ":");
      this.cost = pipeline.cost(rule.cost(), what, Expressions.VARIABLES);
      Set<String> used = new java.util.HashSet<>(key.variables());
      used.addAll(cost.variables());
      this.variables = Set.copyOf(used);
      this.maxCost = rule.maxCost();
      // a condition that cannot be decided leaves the rule applying: the safe side for a limiter
      this.when = rule.when() == null ? null
          : pipeline.condition(rule.when(), what + ": when", Expressions.VARIABLES, true, "the rule applied");
      this.skipWhen = rule.skipWhen() == null ? null
          : pipeline.condition(rule.skipWhen(), what + ": skip-when", Expressions.VARIABLES, false, "the rule applied");
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
          Expressions.COUNT_VARIABLES, true, "the request was counted");
      Set<String> counting = new java.util.HashSet<>(countWhen == null ? Set.of() : countWhen.variables());
      counting.remove("response");
      this.countVariables = Set.copyOf(counting);
    }

    /** Whether the rule has a condition to test before it applies. */
    boolean hasConditions() {
      return when != null || skipWhen != null;
    }

    /** Whether the conditions let the rule apply, in {@code context} (holding {@link #conditionVariables}). */
    boolean applies(org.springframework.expression.EvaluationContext context) {
      return (when == null || when.test(context)) && (skipWhen == null || !skipWhen.test(context));
    }

    /**
     * Whether the rule applies to {@code method}: one it names, or any when it names none, but a CORS
     * preflight (the browser asking before a call) only when it names OPTIONS.
     */
    boolean matchesMethod(String method, boolean preflight) {
      return methods.isEmpty() ? !preflight : methods.contains(method.toUpperCase(Locale.ROOT));
    }

    /**
     * The variables captured by the first pattern that matches {@code path} (or, when it ends
     * with a slash, {@code withoutSlash}); null when none does.
     */
    Map<String, String> match(PathContainer path, PathContainer withoutSlash) {
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
}

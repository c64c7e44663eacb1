package dev.ratelimit.servlet;

import jakarta.servlet.http.HttpServletRequest;
import dev.ratelimit.internal.http.CompiledRule;
import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;

/** Which rules a request matches: its canonical path against path patterns, its method. */
final class Matching {
  private Matching() {}

  /**
   * Parses a rule's path pattern.
   *
   * @throws IllegalArgumentException naming the rule and the path
   */
  static PathPattern parsePattern(String rule, String path) {
    return CompiledRule.parsePattern(rule, path);
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
    return CompiledRule.container(decodedPath);
  }

}

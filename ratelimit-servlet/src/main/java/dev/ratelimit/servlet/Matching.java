package dev.ratelimit.servlet;

import jakarta.servlet.http.HttpServletRequest;

/** What a servlet request is matched by: its canonical path within the application, a CORS preflight. */
final class Matching {
  private Matching() {}

  /** A CORS preflight: {@code OPTIONS} with {@code Origin} and {@code Access-Control-Request-Method}. */
  static boolean isCorsPreflight(HttpServletRequest request) {
    return "OPTIONS".equals(request.getMethod()) && request.getHeader("Origin") != null
        && request.getHeader("Access-Control-Request-Method") != null;
  }

  /**
   * The path within the application as the container canonicalised it (decoded, dot segments
   * and path parameters removed): servlet path plus path info, which is what the container
   * routed by. The raw request URI is not used, so that {@code /%61pi} or {@code /api;x/..} name
   * the resource they reach.
   */
  static String pathWithinApplication(HttpServletRequest request) {
    String servletPath = request.getServletPath();
    String pathInfo = request.getPathInfo();
    String path = (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
    return path.isEmpty() ? "/" : path;
  }
}

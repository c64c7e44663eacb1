package dev.ratelimit.service;

/**
 * The details of errors that the container, not the API, answers: requests Tomcat refuses, and
 * errors forwarded to {@code /error}. Said so that a client can act on them; never an exception's
 * class or a stack trace.
 */
final class ContainerErrors {
  private static final String API = "; the API is described at /v1/openapi.yaml";
  private static final String LONG_KEYS = "; a long key goes in the body: POST /v1/inspect, POST /v1/reset";

  private ContainerErrors() {}

  /**
   * The detail for {@code status}; {@code reason} is the container's own message (Tomcat's, in
   * English), used for 400s, where it names what was malformed.
   */
  static String detail(int status, String method, String allow, String reason) {
    return switch (status) {
      case 400 -> "the request is not valid HTTP/1.1" + (reason == null || reason.isBlank() ? "" : " (" + reason + ")")
          + ": check the request line, the path's percent-encoding (UTF-8, encodeURIComponent) and the headers"
          + " (a Host header, a numeric Content-Length, no control characters such as NUL)"
          + (reason != null && reason.contains("too large") ? LONG_KEYS : "");
      case 404 -> "no such resource" + API;
      case 405 -> method + " is not allowed here" + (allow == null ? "" : "; allowed: " + allow) + API;
      case 408 -> "the request did not arrive whole in time: send it without pauses";
      case 413 -> "the request is too large";
      case 414, 431 -> "the request line or headers are too large (8 KB)" + LONG_KEYS;
      case 501 -> method + " is not implemented" + API;
      default -> status >= 500 ? "the service failed to answer; the error is in its log" : "the request was refused";
    };
  }
}

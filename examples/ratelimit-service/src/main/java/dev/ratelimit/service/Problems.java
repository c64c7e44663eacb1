package dev.ratelimit.service;

import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.http.HttpStatus;
import tools.jackson.databind.json.JsonMapper;

/**
 * RFC 9457 problem bodies written where Spring MVC's exception handling does not reach: the
 * filters in front of it, the async read of a body, and Tomcat's own error reports.
 */
final class Problems {
  static final String CONTENT_TYPE = "application/problem+json";
  private static final JsonMapper JSON = JsonMapper.builder().build();

  private Problems() {}

  /** The problem's JSON: {@code type}, {@code title}, {@code status}, {@code detail}, {@code instance}. */
  static byte[] json(int status, String detail, String instance) {
    Map<String, Object> problem = new LinkedHashMap<>();
    problem.put("type", "about:blank");
    problem.put("title", title(status));
    problem.put("status", status);
    problem.put("detail", detail);
    if (instance != null) {
      problem.put("instance", instance);
    }
    return JSON.writeValueAsBytes(problem);
  }

  /**
   * Writes the problem as the whole response; the caller has checked that nothing was committed.
   * No charset parameter: JSON is UTF-8 (RFC 8259), as in Spring MVC's problem responses.
   */
  static void write(HttpServletResponse response, int status, String detail, String instance) throws IOException {
    byte[] body = json(status, detail, instance);
    response.resetBuffer();
    response.setStatus(status);
    response.setContentType(CONTENT_TYPE);
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
    response.flushBuffer();
  }

  static String title(int status) {
    HttpStatus known = HttpStatus.resolve(status);
    return known != null ? known.getReasonPhrase() : "Error " + status;
  }
}

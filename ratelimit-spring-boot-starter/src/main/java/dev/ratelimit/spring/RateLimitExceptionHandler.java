package dev.ratelimit.spring;

import dev.ratelimit.annotation.RateLimitExceededException;
import dev.ratelimit.servlet.DeniedResponse;
import dev.ratelimit.servlet.HeaderOptions;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;

/**
 * Turns {@link RateLimitExceededException} from a controller into the same denied response the
 * filter sends: {@code Retry-After}, {@code Cache-Control: no-store}, the limit headers and, by
 * default, a 429 with a problem+json body ({@code ratelimit.denied-response} configures it).
 * Ordered first so that a catch-all handler of the application does not swallow it.
 */
@ControllerAdvice
@Order(Ordered.HIGHEST_PRECEDENCE)
public class RateLimitExceptionHandler {
  private final HeaderOptions headers;
  private final DeniedResponse deniedResponse;

  RateLimitExceptionHandler(HeaderOptions headers, DeniedResponse deniedResponse) {
    this.headers = headers;
    this.deniedResponse = deniedResponse;
  }

  /** A request without a key, when {@code ratelimit.missing-key=reject}: 400 problem+json. */
  @ExceptionHandler(MissingRateLimitKeyException.class)
  public void missingKey(MissingRateLimitKeyException e, HttpServletResponse response) throws IOException {
    response.setStatus(400);
    response.setHeader("Cache-Control", "no-store");
    response.setContentType("application/problem+json");
    response.getWriter().write("{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
        + "\"detail\":\"the request has no rate-limit key\"}");
  }

  /**
   * Writes the denied response ({@code ratelimit.denied-response}, by default the 429 with a
   * problem body), its limit headers listing the filter's policies too when a filter rule checked
   * the request.
   */
  @ExceptionHandler(RateLimitExceededException.class)
  public void tooManyRequests(RateLimitExceededException e, HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    deniedResponse.write(request, response, e.decisions().decisions(), headers);
  }
}

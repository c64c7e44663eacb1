package dev.ratelimit.servlet;

import dev.ratelimit.MultiDecision;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * Writes the response to a request the limit denied; the filter then does not call the chain.
 *
 * <p>When it is called, the limit headers ({@code RateLimit-Policy}, {@code RateLimit} and the
 * legacy ones, as configured) are already set. The default handler is
 * {@link RateLimitResponses#writeDenied}: status 429, {@code Retry-After},
 * {@code Cache-Control: no-store} and an {@code application/problem+json} body. A custom handler
 * can reuse those helpers:
 *
 * <pre>{@code
 * DeniedHandler handler = (request, response, decision) -> {
 *   RateLimitResponses.writeDenied(response, decision.decisions(), HeaderOptions.DEFAULT);
 *   metrics.increment("denied", decision.limiting().policy().name());
 * };
 * }</pre>
 */
@FunctionalInterface
public interface DeniedHandler {
  /**
   * Writes the denied response.
   *
   * @param request the request
   * @param response its response, with the limit headers set and nothing committed
   * @param decision every policy checked for the request; {@code allowed()} is false and
   *     {@link MultiDecision#limiting()} is the denying policy with the longest wait
   * @throws IOException when writing fails
   */
  void handle(HttpServletRequest request, HttpServletResponse response, MultiDecision decision)
      throws IOException;
}

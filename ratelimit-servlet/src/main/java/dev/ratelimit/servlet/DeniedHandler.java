package dev.ratelimit.servlet;

import dev.ratelimit.MultiDecision;
import dev.ratelimit.http.DeniedResponse;
import dev.ratelimit.http.RateLimitRule;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * Writes the response to a request the limit denied; the filter then does not call the chain.
 *
 * <p>When it is called, the limit headers ({@code RateLimit-Policy}, {@code RateLimit} and the
 * legacy ones, as configured) are already set. The default handler writes the {@link
 * DeniedResponse} configured for the denying rule, else the filter's, by default {@link
 * DeniedResponse#PROBLEM_JSON}: status 429, {@code Retry-After}, {@code Cache-Control: no-store}
 * and an {@code application/problem+json} body. A lambda replaces that response; to add to it
 * instead, override the method that is given the configured response:
 *
 * <pre>{@code
 * DeniedHandler handler = new DeniedHandler() {
 *   public void handle(HttpServletRequest request, HttpServletResponse response, MultiDecision decision,
 *       DeniedResponse configured) throws IOException {
 *     metrics.increment("denied", decision.limiting().policy().name());
 *     RateLimitResponses.writeDenied(request, response, decision.decisions(), HeaderOptions.DEFAULT, configured);
 *   }
 *
 *   public void handle(HttpServletRequest request, HttpServletResponse response, MultiDecision decision)
 *       throws IOException {
 *     handle(request, response, decision, DeniedResponse.PROBLEM_JSON);
 *   }
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

  /**
   * Writes the denied response, given the one configured for it: the denying rule's {@link
   * RateLimitRule#deniedResponse()}, else the filter's ({@link RateLimitFilter.Builder#deniedResponse}).
   * The filter calls this method; by default it calls {@link #handle(HttpServletRequest,
   * HttpServletResponse, MultiDecision)}, whose response replaces the configured one.
   *
   * @param configured the response configured for this denial; {@link RateLimitResponses#writeDenied(HttpServletRequest,
   *     HttpServletResponse, java.util.List, dev.ratelimit.http.HeaderOptions, DeniedResponse)} writes it
   * @throws IOException when writing fails
   */
  default void handle(HttpServletRequest request, HttpServletResponse response, MultiDecision decision,
      DeniedResponse configured) throws IOException {
    handle(request, response, decision);
  }
}

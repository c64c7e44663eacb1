package dev.ratelimit.spring;

import dev.ratelimit.MultiDecision;
import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.internal.expression.SandboxContext;
import dev.ratelimit.servlet.ClientIp;
import dev.ratelimit.http.HeaderOptions;
import dev.ratelimit.servlet.RateLimitResponses;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.lang.reflect.Method;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;
import org.springframework.web.method.HandlerMethod;

/**
 * {@link CallRequest} of a servlet application: the request Spring holds for the current thread
 * ({@link RequestContextHolder}). Only loaded when the servlet API and spring-web are present.
 */
final class ServletCallRequest implements CallRequest {
  /**
   * Spring MVC's request attribute holding the handler it dispatched to ({@code
   * HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE}, spelled out: spring-webmvc is optional).
   */
  private static final String MVC_HANDLER = "org.springframework.web.servlet.HandlerMapping.bestMatchingHandler";

  private final ClientIp clientIp;
  private final HeaderOptions headers;

  ServletCallRequest(ClientIp clientIp, HeaderOptions headers) {
    this.clientIp = clientIp;
    this.headers = headers;
  }

  @Override
  public Object bind(SandboxContext context) {
    HttpServletRequest request = currentRequest();
    if (request != null) {
      context.setVariable("request", request);
      // resolved only for an expression that reads it, once per call
      context.setLazyVariable("clientIp", () -> clientIp.resolve(request));
      context.setLazyVariable("clientNetwork", () -> ClientIp.network((String) context.lookupVariable("clientIp")));
      context.setVariable("principal", request.getUserPrincipal() == null ? null : request.getUserPrincipal().getName());
    }
    return request;
  }

  /**
   * Writes the headers when the method is the controller method Spring MVC dispatched the request
   * to, together with those a filter rule wrote for the request. Another bean's method called
   * while serving the request (an outbound client, a service) writes none: its limit is not the
   * caller's, and its headers would tell the client of a limit it is not under. Without Spring
   * MVC's handler (a plain servlet), a {@code REJECT} call writes them and a {@code WAIT} call does
   * not.
   */
  @Override
  public void writeHeaders(Object request, Method method, Method specific, RateLimited.Mode mode,
      MultiDecision decision) {
    if (!(request instanceof HttpServletRequest servletRequest) || !dispatchedTo(servletRequest, method, specific, mode)) {
      return;
    }
    if (RequestContextHolder.getRequestAttributes() instanceof ServletRequestAttributes servlet) {
      HttpServletResponse response = servlet.getResponse();
      if (response != null && !response.isCommitted()) {
        // with the filter's: a request both limit check lists both, never only the last writer's
        RateLimitResponses.writeHeaders(servletRequest, response, decision.decisions(), headers);
      }
    }
  }

  private static boolean dispatchedTo(HttpServletRequest request, Method method, Method specific,
      RateLimited.Mode mode) {
    if (request.getAttribute(MVC_HANDLER) instanceof HandlerMethod handler) {
      Method handling = handler.getMethod();
      return handling.equals(specific) || handling.equals(method);
    }
    return mode == RateLimited.Mode.REJECT;
  }

  private static HttpServletRequest currentRequest() {
    RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
    return attributes instanceof ServletRequestAttributes servlet ? servlet.getRequest() : null;
  }
}

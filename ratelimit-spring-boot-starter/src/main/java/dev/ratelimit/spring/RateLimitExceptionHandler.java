package dev.ratelimit.spring;

import dev.ratelimit.annotation.RateLimitExceededException;
import dev.ratelimit.http.DeniedResponse;
import dev.ratelimit.http.HeaderOptions;
import dev.ratelimit.servlet.RateLimitResponses;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.core.Ordered;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.method.annotation.ExceptionHandlerMethodResolver;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * Turns {@link RateLimitExceededException} from a controller into the same denied response the
 * filter sends: {@code Retry-After}, {@code Cache-Control: no-store}, the limit headers and, by
 * default, a 429 with a problem+json body ({@code ratelimit.denied-response} configures it); and
 * {@link MissingRateLimitKeyException} into a 400.
 *
 * <p>A {@link HandlerExceptionResolver} ordered first, rather than an {@code @ExceptionHandler}
 * advice: a denial is the common answer of a limited endpoint under load, and Spring's advice
 * machinery builds and invokes a handler method per exception, which costs more than the denial
 * itself. An {@code @ExceptionHandler} of the controller itself that takes the exception (or a
 * supertype of it) still answers it, as it would before any advice; a catch-all advice of the
 * application does not swallow it.
 */
public class RateLimitExceptionHandler implements HandlerExceptionResolver, Ordered {
  private final HeaderOptions headers;
  private final DeniedResponse deniedResponse;
  private static final byte[] MISSING_KEY_BODY = ("{\"type\":\"about:blank\",\"title\":\"Bad Request\","
      + "\"status\":400,\"detail\":\"the request has no rate-limit key\"}").getBytes(StandardCharsets.US_ASCII);

  private final Map<Class<?>, ExceptionHandlerMethodResolver> ownHandlers = new ConcurrentHashMap<>();

  RateLimitExceptionHandler(HeaderOptions headers, DeniedResponse deniedResponse) {
    this.headers = headers;
    this.deniedResponse = deniedResponse;
  }

  @Override
  public ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response, Object handler,
      Exception ex) {
    Throwable ours = ours(ex);
    if (ours == null || answeredByTheController(handler, ex)) {
      return null;
    }
    try {
      if (ours instanceof RateLimitExceededException denied) {
        RateLimitResponses.writeDenied(request, response, denied.decisions().decisions(), headers, deniedResponse);
      } else {
        missingKey(response);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new ModelAndView(); // empty: answered, nothing to render
  }

  @Override
  public int getOrder() {
    return Ordered.HIGHEST_PRECEDENCE;
  }

  /** The exception, or the first of its causes, that this class answers; null if none. */
  private static Throwable ours(Throwable ex) {
    for (Throwable t = ex; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof RateLimitExceededException || t instanceof MissingRateLimitKeyException) {
        return t;
      }
    }
    return null;
  }

  private boolean answeredByTheController(Object handler, Exception ex) {
    if (!(handler instanceof HandlerMethod method)) {
      return false;
    }
    ExceptionHandlerMethodResolver own = ownHandlers.computeIfAbsent(method.getBeanType(),
        ExceptionHandlerMethodResolver::new);
    return own.hasExceptionMappings() && own.resolveMethodByThrowable(ex) != null;
  }

  /** A request without a key, when {@code ratelimit.missing-key=reject}: 400 problem+json. */
  private static void missingKey(HttpServletResponse response) throws IOException {
    response.setStatus(400);
    response.setHeader("Cache-Control", "no-store");
    response.setContentType("application/problem+json");
    response.getOutputStream().write(MISSING_KEY_BODY); // bytes: JSON has no charset parameter

  }
}

package dev.ratelimit.spring;

import dev.ratelimit.annotation.RateLimitExceededException;
import dev.ratelimit.http.DeniedResponse;
import dev.ratelimit.http.HeaderOptions;
import dev.ratelimit.webflux.ExchangeResponses;
import java.nio.charset.StandardCharsets;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatus;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;

/**
 * Spring WebFlux: turns {@link RateLimitExceededException} (a {@code @RateLimited} handler's
 * error signal) into the same denied response the filter sends, by default a 429 with {@code
 * Retry-After}, the limit headers and a problem+json body ({@code ratelimit.denied-response}
 * configures it); and {@link MissingRateLimitKeyException} into a 400. Ordered before Spring Boot's
 * error handler (-1), so that it does not become a 500.
 */
public class RateLimitWebExceptionHandler implements WebExceptionHandler, Ordered {
  private final HeaderOptions headers;
  private final DeniedResponse deniedResponse;

  RateLimitWebExceptionHandler(HeaderOptions headers, DeniedResponse deniedResponse) {
    this.headers = headers;
    this.deniedResponse = deniedResponse;
  }

  @Override
  public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
    if (ex instanceof RateLimitExceededException refused) {
      return ExchangeResponses.writeDenied(exchange, refused.decisions().decisions(), headers, deniedResponse);
    }
    if (ex instanceof MissingRateLimitKeyException && !exchange.getResponse().isCommitted()) {
      exchange.getResponse().setStatusCode(HttpStatus.BAD_REQUEST);
      exchange.getResponse().getHeaders().set("Cache-Control", "no-store");
      exchange.getResponse().getHeaders().set("Content-Type", "application/problem+json");
      byte[] body = ("{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
          + "\"detail\":\"the request has no rate-limit key\"}").getBytes(StandardCharsets.UTF_8);
      return exchange.getResponse().writeWith(Mono.fromSupplier(() -> exchange.getResponse().bufferFactory().wrap(body)));
    }
    return Mono.error(ex);
  }

  /** Before Spring Boot's ErrorWebExceptionHandler (-1) and WebFlux's own (0). */
  @Override
  public int getOrder() {
    return -2;
  }
}

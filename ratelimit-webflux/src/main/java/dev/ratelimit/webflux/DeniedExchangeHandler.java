package dev.ratelimit.webflux;

import dev.ratelimit.MultiDecision;
import dev.ratelimit.http.DeniedResponse;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Answers a request the limit denied; the filter then does not call the chain. When it is called,
 * the limit headers are set. The default writes the configured response ({@link
 * ExchangeResponses#writeDenied}); a handler can add to it (a log line, CORS headers) and then
 * write it, or answer otherwise. It must not block: it runs on an event-loop thread.
 */
@FunctionalInterface
public interface DeniedExchangeHandler {
  /**
   * Answers the denied request.
   *
   * @param exchange the exchange, its response not committed
   * @param decision every policy checked for the request; {@code allowed()} is false
   * @param configured the denying rule's response, else the filter's
   * @return completes when the response is written
   */
  Mono<Void> handle(ServerWebExchange exchange, MultiDecision decision, DeniedResponse configured);
}

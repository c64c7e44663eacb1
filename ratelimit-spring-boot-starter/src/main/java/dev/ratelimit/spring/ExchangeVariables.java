package dev.ratelimit.spring;

import dev.ratelimit.internal.expression.SandboxContext;
import dev.ratelimit.internal.http.ForwardedClient;
import dev.ratelimit.webflux.ReactiveClientIp;
import java.security.Principal;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.util.ClassUtils;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

/**
 * The request variables of a reactive {@code @RateLimited} call: the exchange the subscription
 * serves, which {@link ServerWebExchangeContextFilter} (registered by the starter in a reactive web
 * application) puts in the Reactor context. {@code #request} is the {@link ServerHttpRequest},
 * {@code #clientIp} the peer or, behind trusted proxies, what they forwarded, {@code #clientNetwork}
 * its network, {@code #principal} the exchange's principal's name. A subscription without an
 * exchange (a call made outside a request) gets none, as a servlet call outside a request does.
 * Loaded only when Spring WebFlux is present.
 */
final class ExchangeVariables {
  /** Whether Spring WebFlux's exchange context filter is on the class path. */
  static final boolean PRESENT = ClassUtils.isPresent(
      "org.springframework.web.filter.reactive.ServerWebExchangeContextFilter", ExchangeVariables.class.getClassLoader());

  private final ForwardedClient clientIp;

  ExchangeVariables(ForwardedClient clientIp) {
    this.clientIp = clientIp;
  }

  /** {@code context} with the exchange's variables set, once its principal is known; as it is without an exchange. */
  Mono<SandboxContext> bind(ContextView subscriber, SandboxContext context) {
    ServerWebExchange exchange = ServerWebExchangeContextFilter.getExchange(subscriber).orElse(null);
    if (exchange == null) {
      return Mono.just(context);
    }
    ServerHttpRequest request = exchange.getRequest();
    context.setVariable("request", request);
    // resolved only for an expression that reads it, once per subscription
    // the filter warns of untrusted forwarding headers; a call does not say it again
    context.setLazyVariable("clientIp", () -> ReactiveClientIp.of(request, clientIp, null));
    context.setLazyVariable("clientNetwork", () -> ForwardedClient.network((String) context.lookupVariable("clientIp")));
    context.setVariable("principal", null);
    return exchange.getPrincipal().map(principal -> {
      context.setVariable("principal", ((Principal) principal).getName());
      return context;
    }).defaultIfEmpty(context);
  }
}

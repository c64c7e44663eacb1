package dev.ratelimit.webflux;

import dev.ratelimit.internal.http.ForwardedClient;
import java.util.List;
import java.util.function.Consumer;
import org.springframework.http.server.reactive.ServerHttpRequest;

/**
 * {@code #clientIp} of a reactive request, as the WebFilter and a reactive {@code @RateLimited}
 * call read it: the peer, or behind the trusted proxies what they forwarded ({@code
 * X-Forwarded-For}, {@code Forwarded}). For the library's reactive doors; not an API for
 * applications.
 */
public final class ReactiveClientIp {
  private ReactiveClientIp() {}

  /** What resolves the client from the peer's address and the forwarding headers' lines (each null when absent). */
  @FunctionalInterface
  interface Resolver {
    String resolve(String peer, List<String> forwardedFor, List<String> forwarded);
  }

  /**
   * The client's address of {@code request} behind {@code trusted}, telling {@code
   * ignoredForwarding} (when not null) of a local peer whose forwarding headers were not believed;
   * null when the server does not know the peer.
   */
  public static String of(ServerHttpRequest request, ForwardedClient trusted, Consumer<String> ignoredForwarding) {
    return of(request, (peer, forwardedFor, forwarded) -> trusted.resolve(peer, forwardedFor, forwarded,
        ignoredForwarding));
  }

  static String of(ServerHttpRequest request, Resolver resolver) {
    String peer = ExchangeExpressions.address(request.getRemoteAddress());
    return peer == null ? null : resolver.resolve(peer, request.getHeaders().get("X-Forwarded-For"),
        request.getHeaders().get("Forwarded"));
  }
}

package dev.ratelimit.webflux;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.http.HttpStatus;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebHandler;
import org.springframework.web.server.adapter.WebHttpHandlerBuilder;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * A WebFlux application on a real Reactor Netty server on a loopback port, with a rate-limit
 * filter: it answers {@code ok <path>} with the status of the query parameter {@code status}
 * (200 without), and records the thread each response was made on. A request's {@code X-User}
 * header becomes its principal, as an authentication filter would set it.
 */
final class NettyApp implements AutoCloseable {
  private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();

  private final DisposableServer server;
  /** The thread the handler last ran on. */
  final AtomicReference<String> handlerThread = new AtomicReference<>();

  NettyApp(WebFilter rateLimit) {
    this(rateLimit, null);
  }

  /** {@code handler} answers instead of the default one when not null. */
  NettyApp(WebFilter rateLimit, WebHandler handler) {
    WebHandler answer = handler != null ? handler : exchange -> {
      handlerThread.set(Thread.currentThread().getName());
      String status = exchange.getRequest().getQueryParams().getFirst("status");
      exchange.getResponse().setStatusCode(HttpStatus.valueOf(status == null ? 200 : Integer.parseInt(status)));
      byte[] body = ("ok " + exchange.getRequest().getPath().value()).getBytes(StandardCharsets.UTF_8);
      return exchange.getResponse().writeWith(Mono.just(exchange.getResponse().bufferFactory().wrap(body)));
    };
    WebFilter user = (exchange, chain) -> {
      String name = exchange.getRequest().getHeaders().getFirst("X-User");
      if (name == null) {
        return chain.filter(exchange);
      }
      Principal principal = () -> name;
      return chain.filter(exchange.mutate().principal(Mono.just(principal)).build());
    };
    // the codecs made now: made on the first request, they read a properties file on the event loop
    HttpHandler http = WebHttpHandlerBuilder.webHandler(answer).filter(user, rateLimit)
        .codecConfigurer(ServerCodecConfigurer.create()).build();
    this.server = HttpServer.create().host("127.0.0.1").port(0).handle(new ReactorHttpHandlerAdapter(http))
        .bindNow(Duration.ofSeconds(10));
  }

  URI uri(String pathAndQuery) {
    return URI.create("http://127.0.0.1:" + server.port() + pathAndQuery);
  }

  HttpResponse<String> get(String pathAndQuery, String... headers) throws IOException, InterruptedException {
    return send("GET", pathAndQuery, headers);
  }

  HttpResponse<String> send(String method, String pathAndQuery, String... headers)
      throws IOException, InterruptedException {
    HttpRequest.Builder request = HttpRequest.newBuilder(uri(pathAndQuery)).timeout(Duration.ofSeconds(5))
        .method(method, HttpRequest.BodyPublishers.noBody());
    for (int i = 0; i < headers.length; i += 2) {
      request.header(headers[i], headers[i + 1]);
    }
    return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Override
  public void close() {
    server.disposeNow(Duration.ofSeconds(10));
  }
}

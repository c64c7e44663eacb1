package dev.ratelimit.servlet;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.function.Consumer;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * An embedded Jetty 12 (ee10, Servlet 6.0) on a random loopback port, with one servlet on
 * {@code /*} answering {@code 200 ok METHOD PATH}, and an HTTP client for it. Stopped by close().
 */
final class TestServer implements AutoCloseable {
  private static final HttpClient CLIENT = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(10)).version(HttpClient.Version.HTTP_1_1).build();

  private final Server server;
  private final int port;
  final ServletContextHandler context;

  private TestServer(Server server, ServletContextHandler context, int port) {
    this.server = server;
    this.context = context;
    this.port = port;
  }

  /** A server whose filter on {@code /*} is {@code filter} (built in code). */
  static TestServer with(Filter filter) {
    return start(context -> context.addFilter(new FilterHolder(filter), "/*", EnumSet.of(DispatcherType.REQUEST)));
  }

  /** A server whose filter is a {@link RateLimitFilter#RateLimitFilter()} with these init-params. */
  static TestServer withConfig(Map<String, String> initParams) {
    return start(context -> {
      FilterHolder holder = new FilterHolder(RateLimitFilter.class);
      initParams.forEach(holder::setInitParameter);
      context.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST));
    });
  }

  static TestServer start(Consumer<ServletContextHandler> setup) {
    return start(setup, false);
  }

  /**
   * A server that lets ambiguous paths through ({@code %25}, {@code %3B}, ...), as a lenient
   * container would; Jetty refuses them by default.
   */
  static TestServer lenient(Filter filter) {
    return start(context -> {
      context.addFilter(new FilterHolder(filter), "/*", EnumSet.of(DispatcherType.REQUEST));
      context.getServletHandler().setDecodeAmbiguousURIs(true);
    }, true);
  }

  private static TestServer start(Consumer<ServletContextHandler> setup, boolean lenient) {
    Server server = new Server();
    HttpConfiguration http = new HttpConfiguration();
    if (lenient) {
      http.setUriCompliance(UriCompliance.UNSAFE);
    }
    ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http));
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler("/");
    context.addServlet(new ServletHolder(new Echo()), "/*");
    setup.accept(context);
    server.setHandler(context);
    try {
      server.start();
    } catch (Exception e) {
      try {
        server.stop();
      } catch (Exception ignored) {
        // already failing
      }
      throw new IllegalStateException("Jetty did not start: " + e, e);
    }
    return new TestServer(server, context, connector.getLocalPort());
  }

  /** Whether the context came up (a filter whose init failed leaves it unavailable). */
  boolean available() {
    return context.isAvailable();
  }

  URI uri(String pathAndQuery) {
    return URI.create("http://127.0.0.1:" + port + pathAndQuery);
  }

  HttpResponse<String> get(String pathAndQuery, String... headers) {
    return send("GET", pathAndQuery, headers);
  }

  HttpResponse<String> send(String method, String pathAndQuery, String... headers) {
    HttpRequest.Builder b = HttpRequest.newBuilder(uri(pathAndQuery)).timeout(Duration.ofSeconds(30))
        .method(method, HttpRequest.BodyPublishers.noBody());
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    try {
      return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    try {
      server.stop();
      server.join();
    } catch (Exception e) {
      throw new IllegalStateException("Jetty did not stop: " + e, e);
    }
  }

  /** Answers {@code ok METHOD PATH}. */
  static final class Echo extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
      response.setStatus(200);
      response.setContentType("text/plain;charset=utf-8");
      if (!request.getMethod().equals("HEAD")) {
        response.getWriter().write("ok " + request.getMethod() + " " + Matching.pathWithinApplication(request));
      }
    }
  }
}

package dev.ratelimit.example.servlet;

import dev.ratelimit.servlet.RateLimitFilter;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;

/**
 * A plain servlet application, no Spring container: an embedded Jetty 12 (Servlet 6.0) whose
 * requests pass a {@link RateLimitFilter} configured from a file, as {@code web.xml} would
 * configure it (the init-param {@value RateLimitFilter#CONFIG_PARAM}). The filter reads the file,
 * builds its own limiter and closes it when the server stops.
 *
 * <ul>
 *   <li>{@code GET /}: not limited;
 *   <li>{@code GET /api/hello}: 5 a minute per API key ({@code X-Api-Key}), or per client IP;
 *   <li>{@code POST /login}: 3 attempts every 5 minutes per client IP.
 * </ul>
 *
 * <p>The limits are in {@code ratelimit.properties} on the classpath.
 */
public final class ServletDemo {
  /** The configuration read unless {@code RATELIMIT_CONFIG} names another one. */
  public static final String DEFAULT_CONFIG = "classpath:ratelimit.properties";

  private ServletDemo() {}

  /**
   * Starts the demo and runs until stopped.
   *
   * @param args optionally the port; else the environment variable {@code PORT}, else 8080. The
   *     environment variable {@code RATELIMIT_CONFIG} may name another configuration: a file path
   *     or {@code classpath:...}, {@code .properties}, {@code .yml} or {@code .yaml}.
   */
  public static void main(String[] args) throws Exception {
    String port = args.length > 0 ? args[0] : System.getenv().getOrDefault("PORT", "8080");
    String config = System.getenv().getOrDefault("RATELIMIT_CONFIG", DEFAULT_CONFIG);
    Server server = start(Integer.parseInt(port.trim()), config);
    System.out.println("servlet demo listening on " + server.getURI() + " with " + config);
    server.join();
  }

  /**
   * Starts Jetty with the demo's servlets behind the rate-limit filter.
   *
   * @param port the port to listen on; 0 for any free one ({@code server.getURI()} tells which)
   * @param config the filter's configuration, a file path or {@code classpath:...}
   * @return the started server; {@code stop()} it to shut down (the filter's limiter is closed too)
   * @throws Exception when Jetty does not start, or the configuration is invalid (the message names
   *     the property at fault)
   */
  public static Server start(int port, String config) throws Exception {
    ServletContextHandler context = new ServletContextHandler("/");

    FilterHolder rateLimit = new FilterHolder(RateLimitFilter.class);
    rateLimit.setInitParameter(RateLimitFilter.CONFIG_PARAM, config);
    rateLimit.setAsyncSupported(true); // else an async servlet behind it fails
    context.addFilter(rateLimit, "/*", EnumSet.of(DispatcherType.REQUEST));

    context.addServlet(new ServletHolder(new TextServlet("GET", "try GET /api/hello and POST /login")), "");
    context.addServlet(new ServletHolder(new TextServlet("GET", "hello")), "/api/hello");
    context.addServlet(new ServletHolder(new TextServlet("POST", "welcome")), "/login");

    Server server = new Server(port);
    server.setHandler(context);
    try {
      server.start();
    } catch (Exception e) {
      server.stop();
      throw e;
    }
    return server;
  }

  /** Answers one method with a fixed text, any other with 405. */
  static final class TextServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;

    private final String method;
    private final String text;

    TextServlet(String method, String text) {
      this.method = method;
      this.text = text;
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
      if (!request.getMethod().equals(method)) {
        response.sendError(HttpServletResponse.SC_METHOD_NOT_ALLOWED);
        return;
      }
      response.setContentType("text/plain;charset=utf-8");
      response.getWriter().write(text + "\n");
    }
  }
}

package dev.ratelimit.service;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ValveBase;
import org.apache.coyote.ActionCode;

/**
 * What {@link WholeRequestReader} needs from Tomcat beyond the servlet API, handed over as a request
 * attribute by {@link Valve}: when the request's first byte arrived (Tomcat marks it when it starts
 * reading the request line), and a way to give up its body. Without the latter, Tomcat reads ("swallows")
 * the rest of an unread body after the response, on a worker thread, as slowly as the client sends it.
 */
final class Arrival {
  static final String ATTRIBUTE = Arrival.class.getName();

  private final long startNanos;
  private final Runnable abandonBody;

  private Arrival(long startNanos, Runnable abandonBody) {
    this.startNanos = startNanos;
    this.abandonBody = abandonBody;
  }

  /** The arrival the valve recorded; outside Tomcat, now and nothing to abandon. */
  static Arrival of(HttpServletRequest request) {
    return request.getAttribute(ATTRIBUTE) instanceof Arrival arrival ? arrival : new Arrival(System.nanoTime(), () -> {});
  }

  long startNanos() {
    return startNanos;
  }

  /**
   * Tomcat stops reading this request's body and closes the connection after the response, which
   * says so ({@code Connection: close}): a keep-alive client that was not told would send its next
   * request on a connection being closed, and lose it.
   */
  void abandonBody() {
    abandonBody.run();
  }

  /** Records each request's arrival; in the context's pipeline, before any filter. */
  static final class Valve extends ValveBase {
    Valve() {
      super(true); // async requests pass: a valve that does not support them turns async off
    }

    @Override
    public void invoke(Request request, Response response) throws IOException, ServletException {
      long start = request.getCoyoteRequest().getStartTimeNanos();
      request.setAttribute(ATTRIBUTE, new Arrival(start != -1 ? start : System.nanoTime(), // -1: not marked
          () -> abandonBody(request, response)));
      getNext().invoke(request, response);
    }
  
    /**
     * No swallowing: the connection closes after the response. Tomcat's action also marks the
     * response failed (a 500, due an error page); the application answers itself, so its status
     * stays and no error page is added.
     */
    private static void abandonBody(Request request, Response response) {
      response.setHeader("Connection", "close"); // Tomcat says so itself only for some statuses
      int status = response.getCoyoteResponse().getStatus();
      request.getCoyoteRequest().action(ActionCode.DISABLE_SWALLOW_INPUT, null);
      response.getCoyoteResponse().setStatus(status);
      response.setErrorReported();
    }
  }
}

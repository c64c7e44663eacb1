package dev.ratelimit.service;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ErrorReportValve;
import org.apache.coyote.ActionCode;

/**
 * Tomcat's own error responses, for requests refused before the application sees them (a bad
 * {@code Content-Length}, a NUL in a header, a bad percent-encoding in the path, a request line or
 * headers over the size limit), as {@code application/problem+json} instead of Tomcat's HTML page.
 * Installed as the host's error report valve by {@link TomcatValves}.
 */
final class ProblemErrorReportValve extends ErrorReportValve {

  @Override
  protected void report(Request request, Response response, Throwable throwable) {
    int status = response.getStatus();
    // as Tomcat's own: not for a success, nor when a body was written or the error was reported
    if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
      return;
    }
    AtomicBoolean ioAllowed = new AtomicBoolean(true);
    response.getCoyoteResponse().action(ActionCode.IS_IO_ALLOWED, ioAllowed);
    if (!ioAllowed.get()) {
      return; // the connection is broken: nobody reads a report
    }
    String reason = throwable != null ? throwable.getMessage() : response.getMessage();
    String detail = ContainerErrors.detail(status, request.getMethod(), response.getHeader("Allow"), reason);
    try {
      Problems.write(response.getResponse(), status, detail, null);
      response.finishResponse();
    } catch (IOException | IllegalStateException e) {
      // the client went away while the report was written: nothing more to do
    }
  }
}

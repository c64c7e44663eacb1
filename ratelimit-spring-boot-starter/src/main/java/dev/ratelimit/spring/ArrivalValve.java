package dev.ratelimit.spring;

import dev.ratelimit.servlet.ClientIp;
import jakarta.servlet.ServletException;
import java.io.IOException;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ValveBase;

/**
 * The first valve of Tomcat's engine: records each request's peer and forwarding headers as they
 * arrived ({@link ClientIp#recordArrival}), before a {@code RemoteIpValve} rewrites them, so that
 * only {@code ratelimit.trusted-proxies} decide {@code #clientIp}.
 */
final class ArrivalValve extends ValveBase {
  ArrivalValve() {
    super(true); // async supported: it only records
  }

  @Override
  public void invoke(Request request, Response response) throws IOException, ServletException {
    ClientIp.recordArrival(request);
    getNext().invoke(request, response);
  }
}

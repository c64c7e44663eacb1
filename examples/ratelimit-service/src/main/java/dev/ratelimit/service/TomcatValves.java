package dev.ratelimit.service;

import org.apache.catalina.Pipeline;
import org.apache.catalina.Valve;
import org.apache.catalina.core.StandardHost;
import org.apache.catalina.valves.ErrorReportValve;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.stereotype.Component;

/**
 * Tomcat's side of the service's request handling: each request's {@link Arrival}, and error
 * reports as problems ({@link ProblemErrorReportValve} in the place of Tomcat's HTML one, and of the
 * one Spring Boot adds). Ordered after Boot's own customizer, whose valve it removes.
 */
@Component
class TomcatValves implements WebServerFactoryCustomizer<TomcatServletWebServerFactory> {
  @Override
  public void customize(TomcatServletWebServerFactory factory) {
    factory.addContextValves(new Arrival.Valve());
    factory.addContextCustomizers(context -> {
      StandardHost host = (StandardHost) context.getParent();
      Pipeline pipeline = host.getPipeline();
      for (Valve valve : pipeline.getValves()) {
        if (valve instanceof ErrorReportValve) {
          pipeline.removeValve(valve);
        }
      }
      pipeline.addValve(new ProblemErrorReportValve());
      // the host adds an instance of this class at start unless it finds one: it finds ours
      host.setErrorReportValveClass(ProblemErrorReportValve.class.getName());
    });
  }
}

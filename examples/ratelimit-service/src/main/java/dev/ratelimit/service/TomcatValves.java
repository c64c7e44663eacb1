package dev.ratelimit.service;

import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.stereotype.Component;

/** Tomcat's side of the service's request handling: each request's {@link Arrival}. */
@Component
class TomcatValves implements WebServerFactoryCustomizer<TomcatServletWebServerFactory> {
  @Override
  public void customize(TomcatServletWebServerFactory factory) {
    factory.addContextValves(new Arrival.Valve());
  }
}

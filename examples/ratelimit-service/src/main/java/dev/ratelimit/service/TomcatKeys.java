package dev.ratelimit.service;

import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.stereotype.Component;
import org.apache.tomcat.util.buf.EncodedSolidusHandling;

/**
 * Lets keys in paths be percent-encoded whole ({@code encodeURIComponent}): Tomcat would refuse
 * {@code %2F} and {@code %5C}; passed through, Spring decodes them inside the key. So
 * {@code /v1/inspect/per-user/a%2Fb%3Bc} is key {@code a/b;c}.
 */
@Component
class TomcatKeys implements WebServerFactoryCustomizer<TomcatServletWebServerFactory> {
  @Override
  public void customize(TomcatServletWebServerFactory factory) {
    factory.addConnectorCustomizers(connector -> {
      connector.setEncodedSolidusHandling(EncodedSolidusHandling.PASS_THROUGH.getValue());
      connector.setEncodedReverseSolidusHandling(EncodedSolidusHandling.PASS_THROUGH.getValue());
    });
  }
}

package dev.ratelimit.spring;

import java.util.List;
import java.util.logging.Logger;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.cors.CorsConfiguration;
import org.springframework.web.cors.reactive.CorsConfigurationSource;
import org.springframework.web.cors.reactive.CorsUtils;
import org.springframework.web.cors.reactive.DefaultCorsProcessor;
import org.springframework.web.server.ServerWebExchange;

/**
 * The application's CORS headers on a 429 the reactive filter writes itself, as {@link
 * CorsOnDenial} on the servlet side: the filter runs before Spring Security's and WebFlux's CORS
 * handling, so a browser would hide the 429 from the page's script. The configuration is the
 * reactive {@link CorsConfigurationSource} bean named {@value CorsOnDenial#SOURCE} (the one Spring
 * Security's {@code cors()} reads); mappings made only in {@code WebFluxConfigurer#addCorsMappings}
 * are not seen. A refused origin gets no headers (rather than a 403); a failing configuration is
 * logged at most once a minute and the 429 goes out without them.
 */
final class ReactiveCorsOnDenial {
  private static final Logger LOG = Logger.getLogger(ReactiveCorsOnDenial.class.getName());
  private static final CorsConfigurationSource NONE = exchange -> null;

  private final DefaultCorsProcessor processor = new HeadersOnly();
  private final CorsSourceLookup<CorsConfigurationSource> sources;

  ReactiveCorsOnDenial(BeanFactory beans) {
    this.sources = new CorsSourceLookup<>(beans, CorsConfigurationSource.class, List.of(CorsOnDenial.SOURCE), NONE,
        LOG);
  }

  /** Adds the CORS headers the configuration gives the exchange, if it is a CORS request. */
  void apply(ServerWebExchange exchange) {
    try {
      if (!CorsUtils.isCorsRequest(exchange.getRequest())) {
        return;
      }
    } catch (IllegalArgumentException malformedOrigin) {
      return;
    }
    try {
      CorsConfiguration configuration = sources.source().getCorsConfiguration(exchange);
      if (configuration != null) {
        processor.process(configuration, exchange);
      }
    } catch (RuntimeException e) {
      sources.failed(e);
    }
  }

  /** Spring's processor, but a refused origin leaves the response as it is instead of a 403. */
  private static final class HeadersOnly extends DefaultCorsProcessor {
    @Override
    protected void rejectRequest(ServerHttpResponse response) {}
  }
}

package dev.ratelimit.spring;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.List;
import java.util.logging.Logger;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.http.server.ServerHttpResponse;
import org.springframework.web.cors.CorsConfiguration;
import org.springframework.web.cors.CorsConfigurationSource;
import org.springframework.web.cors.CorsUtils;
import org.springframework.web.cors.DefaultCorsProcessor;

/**
 * The application's CORS headers on a 429 the filter writes itself. The filter runs before Spring
 * Security's chain (and always before Spring MVC), so neither has added them to a request it
 * refuses, and a browser would hide the 429 (its status and {@code Retry-After}) from the page's
 * script as a failed cross-origin request.
 *
 * <p>The configuration is the bean named {@value #SOURCE} (the one Spring Security's {@code cors()}
 * reads when no source is given to it in code), else Spring MVC's ({@value #MVC}: {@code
 * @CrossOrigin} and {@code WebMvcConfigurer#addCorsMappings}; a handler lookup per denied CORS
 * request, and deprecated in Spring Framework 7: once it is gone, only the bean is read). A source
 * given to {@code cors().configurationSource(...)} in code, or an application's own {@code
 * CorsFilter}, is not seen. Spring's own {@link DefaultCorsProcessor} writes the headers, except that
 * an origin the configuration does not allow gets none (rather than Spring's 403): the response
 * stays the 429. Looked up on the first denial, when the context is complete. Nothing here can make
 * the denial fail: a malformed {@code Origin} is not a CORS request, and a failing configuration is
 * logged (at most once a minute) and the 429 goes out without CORS headers.
 */
final class CorsOnDenial {
  /** The bean Spring Security's {@code cors()} reads when it is given no source. */
  static final String SOURCE = "corsConfigurationSource";
  /** Spring MVC's view of its CORS mappings, which Spring Security falls back to. */
  static final String MVC = "mvcHandlerMappingIntrospector";

  private static final Logger LOG = Logger.getLogger(CorsOnDenial.class.getName());
  private static final CorsConfigurationSource NONE = request -> null;

  private final DefaultCorsProcessor processor = new HeadersOnly();
  private final CorsSourceLookup<CorsConfigurationSource> sources;

  CorsOnDenial(BeanFactory beans) {
    this.sources = new CorsSourceLookup<>(beans, CorsConfigurationSource.class, List.of(SOURCE, MVC), NONE, LOG);
  }

  /** Adds the CORS headers the application's configuration gives {@code request}, if it is a CORS request. */
  void apply(HttpServletRequest request, HttpServletResponse response) throws IOException {
    try {
      if (!CorsUtils.isCorsRequest(request)) {
        return;
      }
    } catch (IllegalArgumentException malformedOrigin) {
      return; // as Spring's processor treats it: no CORS headers for an Origin that is not a URL
    }
    try {
      CorsConfiguration configuration = sources.source().getCorsConfiguration(request);
      if (configuration != null) {
        processor.processRequest(configuration, request, response);
      }
    } catch (RuntimeException e) {
      sources.failed(e);
    }
  }

  /** Spring's processor, but a refused origin leaves the response as it is instead of a 403. */
  private static final class HeadersOnly extends DefaultCorsProcessor {
    @Override
    protected void rejectRequest(ServerHttpResponse response) {
      // no CORS headers: the browser refuses the 429 to the script, as it would have the answer
    }
  }
}

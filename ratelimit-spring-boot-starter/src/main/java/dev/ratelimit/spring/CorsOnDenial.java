package dev.ratelimit.spring;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
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
 * <p>The configuration is the one Spring Security's {@code cors()} uses, found the same way: the
 * bean named {@value #SOURCE}, else Spring MVC's ({@value #MVC}: {@code @CrossOrigin} and
 * {@code WebMvcConfigurer#addCorsMappings}). Spring's own {@link DefaultCorsProcessor} writes the
 * headers, except that an origin the configuration does not allow gets none (rather than Spring's
 * 403): the response stays the 429. Looked up on the first denial, when the context is complete.
 */
final class CorsOnDenial {
  /** The bean Spring Security's {@code cors()} reads first. */
  static final String SOURCE = "corsConfigurationSource";
  /** Spring MVC's view of its CORS mappings, which Spring Security falls back to. */
  static final String MVC = "mvcHandlerMappingIntrospector";

  private final BeanFactory beans;
  private final DefaultCorsProcessor processor = new HeadersOnly();
  /** The configuration source, once looked up; {@link #NONE} when there is none. */
  private volatile CorsConfigurationSource source;

  private static final CorsConfigurationSource NONE = request -> null;

  CorsOnDenial(BeanFactory beans) {
    this.beans = beans;
  }

  /** Adds the CORS headers the application's configuration gives {@code request}, if it is a CORS request. */
  void apply(HttpServletRequest request, HttpServletResponse response) throws IOException {
    if (!CorsUtils.isCorsRequest(request)) {
      return;
    }
    CorsConfiguration configuration = source().getCorsConfiguration(request);
    if (configuration != null) {
      processor.processRequest(configuration, request, response);
    }
  }

  private CorsConfigurationSource source() {
    CorsConfigurationSource s = source;
    if (s == null) {
      s = beans.containsBean(SOURCE) ? beans.getBean(SOURCE, CorsConfigurationSource.class)
          : beans.containsBean(MVC) && beans.isTypeMatch(MVC, CorsConfigurationSource.class)
              ? beans.getBean(MVC, CorsConfigurationSource.class) : NONE;
      source = s;
    }
    return s;
  }

  /** Spring's processor, but a refused origin leaves the response as it is instead of a 403. */
  private static final class HeadersOnly extends DefaultCorsProcessor {
    @Override
    protected void rejectRequest(ServerHttpResponse response) {
      // no CORS headers: the browser refuses the 429 to the script, as it would have the answer
    }
  }
}

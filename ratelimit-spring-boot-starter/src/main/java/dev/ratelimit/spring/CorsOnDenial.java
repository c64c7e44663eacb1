package dev.ratelimit.spring;

import dev.ratelimit.internal.LogThrottle;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.logging.Level;
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

  private final BeanFactory beans;
  private final DefaultCorsProcessor processor = new HeadersOnly();
  /** The configuration source, once looked up; {@link #NONE} when there is none. */
  private volatile CorsConfigurationSource source;
  private final LogThrottle throttle = LogThrottle.perMinute();

  CorsOnDenial(BeanFactory beans) {
    this.beans = beans;
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
      CorsConfiguration configuration = source().getCorsConfiguration(request);
      if (configuration != null) {
        processor.processRequest(configuration, request, response);
      }
    } catch (RuntimeException e) {
      long suppressed = throttle.tryAcquire("cors");
      if (suppressed >= 0) {
        LOG.log(Level.WARNING, "the CORS configuration failed on a denied request, so its 429 has no CORS"
            + " headers; ratelimit.filter.cors=false stops this" + throttle.note(suppressed), e);
      }
    }
  }

  private CorsConfigurationSource source() {
    CorsConfigurationSource s = source;
    if (s == null) {
      try {
        s = bean(SOURCE);
        if (s == null) {
          s = bean(MVC);
        }
      } finally {
        source = s == null ? NONE : s; // a lookup that failed is not tried again on every denial
      }
      s = source;
    }
    return s;
  }

  /** The bean {@code name} when there is one and it is a CORS configuration source, else null. */
  private CorsConfigurationSource bean(String name) {
    return beans.containsBean(name) && beans.isTypeMatch(name, CorsConfigurationSource.class)
        ? beans.getBean(name, CorsConfigurationSource.class) : null;
  }

  /** Spring's processor, but a refused origin leaves the response as it is instead of a 403. */
  private static final class HeadersOnly extends DefaultCorsProcessor {
    @Override
    protected void rejectRequest(ServerHttpResponse response) {
      // no CORS headers: the browser refuses the 429 to the script, as it would have the answer
    }
  }
}

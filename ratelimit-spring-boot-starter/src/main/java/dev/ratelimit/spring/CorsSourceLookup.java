package dev.ratelimit.spring;

import dev.ratelimit.internal.LogThrottle;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.springframework.beans.factory.BeanFactory;

/**
 * The application's CORS configuration source for the 429s a filter writes itself, servlet or
 * reactive ({@link CorsOnDenial}, {@link ReactiveCorsOnDenial}): the first bean of the names given
 * that is of the source type, looked up on the first denial (when the context is complete) and
 * never again, also when the lookup failed; and the throttled warning when the configuration fails
 * on a denial.
 *
 * @param <S> the source type, servlet or reactive
 */
final class CorsSourceLookup<S> {
  private final BeanFactory beans;
  private final Class<S> type;
  private final List<String> names;
  private final S none;
  private final Logger log;
  private final LogThrottle throttle = LogThrottle.perMinute();
  /** The source, once looked up; {@link #none} when there is none. */
  private volatile S source;

  /**
   * @param names the beans to try, in order
   * @param none the source answering no configuration, for when there is no bean
   */
  CorsSourceLookup(BeanFactory beans, Class<S> type, List<String> names, S none, Logger log) {
    this.beans = beans;
    this.type = type;
    this.names = names;
    this.none = none;
    this.log = log;
  }

  /** The source: the application's, else the one that answers nothing. */
  S source() {
    S s = source;
    if (s == null) {
      try {
        for (String name : names) {
          if (beans.containsBean(name) && beans.isTypeMatch(name, type)) {
            s = beans.getBean(name, type);
            break;
          }
        }
      } finally {
        source = s == null ? none : s; // a lookup that failed is not tried again on every denial
      }
      s = source;
    }
    return s;
  }

  /** The configuration failed on a denied request: said at most once a minute. */
  void failed(RuntimeException e) {
    long suppressed = throttle.tryAcquire("cors");
    if (suppressed >= 0) {
      log.log(Level.WARNING, "the CORS configuration failed on a denied request, so its 429 has no CORS"
          + " headers; ratelimit.filter.cors=false stops this" + throttle.note(suppressed), e);
    }
  }
}

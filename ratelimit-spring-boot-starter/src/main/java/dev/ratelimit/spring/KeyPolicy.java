package dev.ratelimit.spring;

import dev.ratelimit.internal.LogThrottle;
import dev.ratelimit.spring.RateLimitProperties.MissingKeyAction;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * What a key expression that yields null or blank gets: never a free pass. Either the shared
 * "missing key" bucket of the policy, or a rejection; logged at most once a minute per place.
 */
final class KeyPolicy {
  /** The key under which requests without a key share one bucket. */
  static final String MISSING_KEY = "<missing-key>";
  private static final Logger LOG = Logger.getLogger(KeyPolicy.class.getName());

  private final MissingKeyAction action;
  private final LogThrottle throttle = LogThrottle.perMinute();

  KeyPolicy(MissingKeyAction action) {
    this.action = action;
  }

  /** The key to use for a missing one at {@code where}, or throws when configured to reject. */
  String onMissing(String where, String expression) {
    return onMissing(where, expression, "gave no key");
  }

  /**
   * The key to use for one that cannot serve at {@code where} ({@code what} it gave, for the log),
   * or throws when configured to reject.
   */
  String onMissing(String where, String expression, String what) {
    long suppressed = throttle.tryAcquire(where);
    if (suppressed >= 0) {
      LOG.log(Level.WARNING, "rate-limit key expression ''{0}'' of {1} {2}; {3}{4}",
          new Object[] {expression, where, what,
              action == MissingKeyAction.REJECT ? "rejected" : "limited under the shared missing-key bucket",
              throttle.note(suppressed)});
    }
    if (action == MissingKeyAction.REJECT) {
      throw new MissingRateLimitKeyException(where, expression);
    }
    return MISSING_KEY;
  }
}

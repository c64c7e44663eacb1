package dev.ratelimit.spring;

import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import io.micrometer.observation.ObservationRegistry;
import java.util.Objects;

/**
 * A Micrometer {@code Observation} around each check of a limiter, so that a trace shows the
 * limiter's time and answer, and Boot's metrics handler times it. The observation is named
 * {@value #NAME} and has three low-cardinality keys:
 * <ul>
 *   <li>{@value #POLICY}: the policy's name; for {@code checkAll}, the names joined by commas. At
 *       most {@value #MAX_POLICY_VALUES} distinct values, later ones are {@value #OTHER};</li>
 *   <li>{@value #DECISION}: {@code allowed} or {@code denied}, what the caller was told;</li>
 *   <li>{@value #OUTCOME}: how the decision was made, a {@link RateLimitListener.Outcome} in lower
 *       case ({@code allowed}, {@code denied}, {@code denied_by_near_cache}, {@code failure_allowed},
 *       {@code fallback_denied}, {@code shadow_denied}, ...), as the {@code ratelimit.decisions}
 *       meter's {@code outcome} tag; of the limiting decision for {@code checkAll}.</li>
 * </ul>
 * The key is never a key value, low or high cardinality: keys are often personal data (user ids,
 * IP addresses) and unbounded.
 *
 * <p>The starter applies it to the limiter it builds when the application has an
 * {@link ObservationRegistry} bean (Boot's actuator makes one). A limiter of your own is observed
 * with {@link #observe}, built with {@link #outcomes()} among its listeners. With no observation
 * handler (a no-op registry), a check goes straight to the limiter.
 */
public final class RateLimitObservation {
  /** The observation's name. */
  public static final String NAME = "ratelimit.check";
  /** The key of the policy's name. */
  public static final String POLICY = "ratelimit.policy";
  /** The key of the decision: {@code allowed} or {@code denied}. */
  public static final String DECISION = "ratelimit.decision";
  /** The key of how the decision was made. */
  public static final String OUTCOME = "ratelimit.outcome";
  /** The value of {@value #POLICY} beyond {@value #MAX_POLICY_VALUES} distinct names. */
  public static final String OTHER = "other";
  /** The most distinct values of {@value #POLICY}. */
  public static final int MAX_POLICY_VALUES = 1_000;

  private RateLimitObservation() {}

  /**
   * {@code limiter} with each check ({@code check}, {@code tryAcquire}, {@code checkAll},
   * {@code checkAsync}) observed in {@code registry}; {@code peekAll}, {@code inspect} and {@code
   * reset} consume nothing and are not observed. Every method is the wrapped limiter's, its own
   * {@code peekAll} (timeout, breaker, failure mode, shadow policies) included.
   */
  public static RateLimiter observe(RateLimiter limiter, ObservationRegistry registry) {
    Objects.requireNonNull(limiter, "limiter");
    Objects.requireNonNull(registry, "registry");
    return limiter instanceof ObservedRateLimiter ? limiter : new ObservedRateLimiter(limiter, registry);
  }

  /**
   * The listener that tells the observation how each decision was made: give it to the limiter's
   * builder ({@code RateLimiter.builder().listener(RateLimitObservation.outcomes())}). Without it,
   * {@value #OUTCOME} is read from the decision alone ({@code allowed}, {@code denied}, or
   * {@code failure_...} for the failure mode's fixed answers). A {@code checkAsync} that the
   * backend answers later is read so too.
   */
  public static RateLimitListener outcomes() {
    return CheckOutcomes.LISTENER;
  }
}

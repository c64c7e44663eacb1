package dev.ratelimit.spring;

import dev.ratelimit.Policy;
import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.internal.expression.Pipeline;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;

/**
 * What {@code @RateLimited} asks of one method, parsed once: its policies with their key and cost
 * expressions, the mode and the longest wait.
 *
 * @param method the method
 * @param parameterNames the names its arguments are visible under
 * @param limits one entry per annotation, in declaration order
 * @param mode REJECT unless every annotation says WAIT
 * @param maxWait the shortest maxWait of the annotations
 * @param fallback what answers a refused call instead of the exception; null for none
 */
record RateLimitedMethod(Method method, String[] parameterNames, List<Limit> limits,
    RateLimited.Mode mode, Duration maxWait, Fallback fallback) {

  /**
   * One annotation: a policy and how to compute its key and cost.
   *
   * @param policy the policy: an inline one, or a configured one as it was at start-up
   * @param configured the name of a configured policy ({@code ratelimit.policies.*}), looked up at
   *     every call so that updates apply; null for an inline policy, which stays fixed
   * @param key the key expression, or null for one bucket for the whole method
   * @param cost the cost expression
   * @param countWhen the condition under which a call is charged after it ran; null: charged before
   */
  record Limit(Policy policy, String configured, Pipeline.Key key, Pipeline.Cost cost, Pipeline.Condition countWhen,
      Pipeline.Cost costAfter) {

    /** Whether the policy is reserved before the call and settled after it (countWhen or costAfter). */
    boolean settledAfter() {
      return countWhen != null || costAfter != null;
    }

    /** The policy to check now: the configured policy's current numbers, or the inline one. */
    Policy current(PolicyRegistry policies) {
      return configured == null ? policy : policies.find(configured).orElse(policy);
    }
  }

  /** {@code ClassName.method}, as messages name the method. */
  String describe() {
    return method.getDeclaringClass().getName() + "." + method.getName();
  }
}

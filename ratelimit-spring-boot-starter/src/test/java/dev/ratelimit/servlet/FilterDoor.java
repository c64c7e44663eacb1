package dev.ratelimit.servlet;

import dev.ratelimit.Policy;
import dev.ratelimit.http.MissingKey;
import dev.ratelimit.http.RateLimitRule;
import dev.ratelimit.internal.LogThrottle;
import dev.ratelimit.internal.http.CompiledRule;
import dev.ratelimit.internal.expression.SandboxContext;

/**
 * The servlet filter's key for a value, computed by the filter's own rule and pipeline as for a
 * request: for the starter's tests that compare the two front doors on values no request variable
 * holds (an enum, a UUID). Test code; it reaches the filter's package-private types.
 */
public final class FilterDoor {
  private FilterDoor() {}

  /** The limiter key rule {@code ruleName}, keyed on {@code #principal}, gives when it holds {@code value}. */
  public static String key(String ruleName, Object value) {
    RateLimitRule rule = RateLimitRule.builder(ruleName).path("/**").policy(Policy.parse("10/1m").withName("p"))
        .key("#principal").build();
    CompiledRule compiled = new CompiledRule(rule,
        Expressions.pipeline(MissingKey.SHARED_BUCKET, LogThrottle.perMinute()), Expressions.VARIABLES,
        Expressions.COUNT_VARIABLES);
    SandboxContext context = Expressions.SANDBOX.context();
    context.setVariable("principal", value);
    return compiled.key.evaluate(context);
  }
}

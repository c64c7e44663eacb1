package dev.ratelimit.annotation;

import dev.ratelimit.Algorithm;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Repeatable;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Limits calls of a method (or of every public method a class declares or overrides; the
 * method's own annotations win). Repeatable: several on one method are checked in one {@code checkAll} per distinct key,
 * all or nothing for each key. Different keys are separate states, checked in order up to the
 * first denial: what an earlier key consumed stays consumed when a later one denies (a
 * {@code WAIT} call that tries again checks only the keys not yet admitted, so none is charged twice).
 *
 * <pre>{@code
 * @RateLimited(key = "#userId", policy = "api")                      // a policy from configuration
 * @RateLimited(key = "#userId", limit = 5, window = "1s")             // an inline one
 * public Order place(String userId, Order order) { ... }
 *
 * @RateLimited(key = "'partner-api'", limit = 10, window = "1s", mode = Mode.WAIT, maxWait = "5s")
 * public Quote fetchQuote(String symbol) { ... }                      // outbound: waits for its turn
 * }</pre>
 *
 * <p>Expressions are SpEL, parsed once at start-up (a bad expression or an unknown policy name
 * fails the application context, naming the method). They see the method's arguments by name
 * ({@code #userId}; compile with {@code -parameters}) and as {@code #p0}/{@code #a0}, {@code #args},
 * {@code #method}, {@code #request}, {@code #clientIp} and {@code #clientNetwork} (an IPv6
 * client's {@code /64}, an IPv4 client's address) in a web request, {@code #principal},
 * and beans as {@code @beanName}. Type references, constructors, function calls, assignments and
 * reflection are refused when the application starts, as filter rules' are.
 * Each policy has its own key namespace: two policies with the same key never share counters.
 *
 * <p>In a Spring MVC request, an allowed call writes the limit response headers only when the
 * annotated method is the controller method handling the request; other beans' methods (outbound
 * clients, services) write none.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
@Repeatable(RateLimited.List.class)
public @interface RateLimited {

  /**
   * The key, in SpEL. Empty (the default) means one bucket for the whole method. It must give a
   * text, a number, a boolean, a character, an enum (its name), a UUID, or a collection or map of
   * them, as a filter rule's key; null, blank or anything else (an object's {@code toString} is not
   * used) is a missing key, which never bypasses the limit ({@code ratelimit.missing-key}).
   */
  String key() default "";

  /** The name of a policy from configuration ({@code ratelimit.policies.NAME}); or use {@link #limit}. */
  String policy() default "";

  /** An inline policy's limit per {@link #window}; used when {@link #policy} is empty. */
  long limit() default -1;

  /** An inline policy's window, e.g. {@code "1m"}, {@code "500ms"}. */
  String window() default "";

  /** An inline policy's algorithm. */
  Algorithm algorithm() default Algorithm.GCRA;

  /** An inline policy's burst (capacity of the bucket algorithms); default the limit. */
  long burst() default -1;

  /**
   * An inline policy's name; default {@code SimpleClassName.method}, with the parameter types when
   * the class has several methods of that name, and an index when repeated. Two methods deriving
   * one name (classes of one simple name in two packages) fail start-up: they would share counters.
   */
  String name() default "";

  /**
   * The cost of one call, in SpEL: a number from 1 to the smallest capacity of the method's
   * policies, a fraction rounded up. A call whose cost is anything else, or whose key or cost
   * expression fails, throws {@code IllegalStateException} naming the method and the expression.
   */
  String cost() default "1";

  /**
   * Counts only some outcomes: a condition in SpEL, read after the call, with {@code #result} (what
   * the method returned; null when it threw, and not readable for a {@code void} method) and
   * {@code #exception} (what it threw, else null) besides the key's variables, such as
   * {@code "#exception != null"} or {@code "#result == false"} for "five failed logins per 15
   * minutes". With it, the cost is reserved before the call (a call is refused, thrown, waited for
   * in {@link Mode#WAIT} or answered by the {@link #fallbackMethod}, while this annotation's policy
   * has no room for it) and, after the call, committed when the condition holds and given back
   * otherwise: calls in flight at once never pass beyond the limit. Empty (the default): every call
   * is charged before it runs. Not with a {@code LEAKY_BUCKET} policy, whose delay shapes calls
   * before they run.
   */
  String countWhen() default "";

  /**
   * The call's actual cost, known from its outcome: a SpEL expression read after the call, with
   * {@code #result} and {@code #exception} as {@link #countWhen} has them, such as {@code
   * "#result.usage.totalTokens"} for "100,000 tokens per hour". With it, {@link #cost} is the
   * estimate reserved before the call (refused while there is no room for it), and the reservation
   * is committed at this cost after the call: the difference charged when it is higher (whatever
   * the limit: the work was done, later calls pay the debt), the surplus given back when lower, all
   * of it given back at 0. A whole number from 0 to 2<sup>52</sup>; anything else (or a failure)
   * commits the estimate and makes the call throw {@code IllegalStateException}, naming it. With a
   * {@link #countWhen}, a call the condition does not count is given back whatever this says.
   * Empty (the default): the cost is {@link #cost}. Not with a {@code LEAKY_BUCKET} policy.
   */
  String costAfter() default "";

  /**
   * The name of a method of the same class to call instead of throwing {@link
   * RateLimitExceededException} when a call is refused ({@link Mode#WAIT}: when the wait gives up),
   * as Resilience4j's {@code @RateLimiter(fallbackMethod = ...)}: it is given the call's arguments,
   * and the exception when it takes one more parameter, and what it returns (or throws) is the
   * call's. Its parameter types are the method's, optionally followed by {@code
   * RateLimitExceededException} or a supertype of it; its return type is the method's or one
   * assignable to it. Of two, the one taking the exception wins. Any visibility, static or not; it is
   * called on the bean's own object, so other aspects of it do not apply, and it is not counted.
   * Start-up refuses a name with no such method, naming the method and the signature expected.
   * Repeated annotations name one fallback or none. Empty (the default): the exception is thrown.
   */
  String fallbackMethod() default "";

  /** What happens when the limit is reached. */
  Mode mode() default Mode.REJECT;

  /** In {@link Mode#WAIT}, the longest a call waits for its turn, e.g. {@code "30s"}. */
  String maxWait() default "30s";

  /** What a call does when its limit is reached. */
  enum Mode {
    /** Throw {@link RateLimitExceededException} at once (or call the {@link RateLimited#fallbackMethod}). */
    REJECT,
    /**
     * Wait until admitted (honouring {@code retryAfter}, and a leaky bucket's {@code delay}), up to
     * {@code maxWait}; then proceed, or throw {@link RateLimitExceededException} (or call the
     * {@link RateLimited#fallbackMethod}). A wait longer than what is left of {@code maxWait} gives
     * up at once.
     */
    WAIT
  }

  /** The container of repeated {@link RateLimited} annotations. */
  @Documented
  @Retention(RetentionPolicy.RUNTIME)
  @Target({ElementType.METHOD, ElementType.TYPE})
  @interface List {
    /** The annotations. */
    RateLimited[] value();
  }
}

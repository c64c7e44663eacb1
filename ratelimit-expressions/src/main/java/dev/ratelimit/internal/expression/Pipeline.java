package dev.ratelimit.internal.expression;

import dev.ratelimit.internal.LogThrottle;
import java.util.Objects;
import java.util.Set;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;

/**
 * The one way from a key or cost expression to a key and a cost, for every front door: parsed once
 * in the door's {@link Sandbox}, evaluated per request or call, the value turned into a key or a
 * cost by {@link Values}, a missing key handled by one policy and logged through one
 * {@link LogThrottle}. What the doors do differently is said here, as settings:
 * <ul>
 *   <li>{@link OnError}: a servlet filter never fails a request ({@link OnError#CORRECT}); an
 *       annotated method may throw ({@link OnError#THROW});</li>
 *   <li>{@link MissingKey}: a request or call without a key shares one bucket, or is rejected, in
 *       the way the door rejects ({@link Builder#rejection}).</li>
 * </ul>
 *
 * <p>Internal: shared by the servlet filter and the Spring Boot starter. Not an API; it may change
 * in any release.
 */
public final class Pipeline {
  /** The key part of the shared key of requests and calls whose key is missing. */
  public static final String MISSING = "<missing>";

  /** What an expression that fails, or a cost out of range, does. */
  public enum OnError {
    /**
     * Never fails the request: a key expression that fails gives a missing key; a cost that is not a
     * number, or below 1, is charged 1, and one above what can be charged is charged that; each
     * logged, at most once a minute per place and cause.
     */
    CORRECT,
    /**
     * Throws an {@link IllegalStateException} naming the place and the expression, as a bug in the
     * method's own code would (an exception the expression's own calls throw passes unchanged).
     */
    THROW
  }

  /** What a request or call whose key is missing gets: never a free pass. */
  public enum MissingKey {
    /** Limited under one shared key, {@code <prefix><missing>}, with every other without a key. */
    SHARED_BUCKET,
    /** Rejected: {@link Key#evaluate} gives null, and the door answers as it rejects. */
    REJECT
  }

  private final Sandbox sandbox;
  private final OnError onError;
  private final MissingKey missingKey;
  private final String subject;
  private final String rejection;
  private final System.Logger log;
  private final LogThrottle throttle;

  private Pipeline(Builder b) {
    this.sandbox = b.sandbox;
    this.onError = b.onError;
    this.missingKey = b.missingKey;
    this.subject = b.subject;
    this.rejection = b.rejection;
    this.log = b.log;
    this.throttle = b.throttle;
  }

  /**
   * A pipeline of expressions in {@code sandbox}, logging to {@code log}; by default it
   * {@link OnError#CORRECT corrects}, and lets requests without a key share one bucket.
   */
  public static Builder builder(Sandbox sandbox, System.Logger log) {
    return new Builder(sandbox, log);
  }

  /** The sandbox expressions are parsed and evaluated in. */
  public Sandbox sandbox() {
    return sandbox;
  }

  /**
   * Parses a key expression.
   *
   * @param what the place, for messages: {@code rule 'api'}, {@code @RateLimited on com.example.Orders.place}
   * @param prefix put before every key it gives ({@code api:}, the rule's namespace), or empty
   * @throws IllegalArgumentException as {@link Sandbox#parse}
   */
  public Key key(String text, String what, Variables variables, String prefix) {
    return new Key(sandbox.parse(text, what + ": key", variables), text, what, prefix);
  }

  /**
   * Parses a cost expression.
   *
   * @throws IllegalArgumentException as {@link Sandbox#parse}
   */
  public Cost cost(String text, String what, Variables variables) {
    return new Cost(sandbox.parse(text, what + ": cost", variables), text, what);
  }

  /**
   * Parses a condition: an expression that gives {@code true} or {@code false} ({@code when},
   * {@code skip-when}, {@code count-when}). One that is constant and gives anything else is refused.
   *
   * @param what the place and the condition, for messages: {@code rule 'api': skip-when}
   * @param onError what the condition is taken to be, with {@link OnError#CORRECT}, when it fails or
   *     gives anything but a boolean: the safe side for a limiter, chosen by the door
   * @param onErrorSays what that means, for the log line: {@code the rule applied}
   * @throws IllegalArgumentException as {@link Sandbox#parse}, or naming a constant that is no boolean
   */
  public Condition condition(String text, String what, Variables variables, boolean onError, String onErrorSays) {
    Expression expression = sandbox.parse(text, what, variables);
    if (Sandbox.isConstant(expression)) {
      Object value;
      try {
        value = expression.getValue(sandbox.context());
      } catch (RuntimeException e) {
        throw new IllegalArgumentException(what + " expression '" + text + "' fails: " + e.getMessage(), e);
      }
      if (!(value instanceof Boolean)) {
        throw new IllegalArgumentException(what + " expression '" + text + "' gives " + LogThrottle.sanitize(value)
            + ", not true or false");
      }
    }
    return new Condition(expression, text, what, onError, onErrorSays);
  }

  /** A parsed condition of one place. */
  public final class Condition {
    private final Expression expression;
    private final String text;
    private final String what;
    /** What a condition that fails or gives no boolean is taken to be, with {@link OnError#CORRECT}. */
    private final boolean fallback;
    private final String fallbackSays;

    private Condition(Expression expression, String text, String what, boolean fallback, String fallbackSays) {
      this.expression = expression;
      this.text = text;
      this.what = what;
      this.fallback = fallback;
      this.fallbackSays = fallbackSays;
    }

    /** The expression's text. */
    public String text() {
      return text;
    }

    /** The variables it reads. */
    public Set<String> variables() {
      return Sandbox.variables(expression);
    }

    /**
     * Whether the condition holds in {@code context}. When it fails or gives anything but a boolean
     * (null too): with {@link OnError#CORRECT}, the {@code onError} it was parsed with, logged at
     * most once a minute per place and cause.
     *
     * @throws IllegalStateException with {@link OnError#THROW}, naming the place and the expression
     *     (an exception the expression's own calls throw passes unchanged)
     */
    public boolean test(EvaluationContext context) {
      Object value;
      try {
        value = expression.getValue(context);
      } catch (RuntimeException e) {
        if (onError == OnError.THROW) {
          throw failed(e, "condition", what, text);
        }
        return corrected("failed", "failed (" + LogThrottle.sanitize(e.getMessage()) + ")");
      }
      if (value instanceof Boolean b) {
        return b;
      }
      String gave = "gave " + (value == null ? "null" : "a " + value.getClass().getName()) + ", not true or false";
      if (onError == OnError.THROW) {
        throw new IllegalStateException(what + " expression '" + text + "' " + gave);
      }
      return corrected("type", gave);
    }

    private boolean corrected(String cause, String problem) {
      throttle.warn(log, what + ":" + cause, what + " expression '" + text + "' " + problem + "; taken as "
          + fallback + ": " + fallbackSays);
      return fallback;
    }
  }

  /** A parsed key expression of one place. */
  public final class Key {
    private final Expression expression;
    private final DirectLookup direct; // null: SpEL evaluates
    private final String text;
    private final String what;
    private final String prefix;
    private final String shared;

    private Key(Expression expression, String text, String what, String prefix) {
      this.expression = expression;
      this.direct = DirectLookup.of(expression);
      this.text = text;
      this.what = what;
      this.prefix = Objects.requireNonNull(prefix);
      this.shared = prefix + MISSING;
    }

    /** The expression's text. */
    public String text() {
      return text;
    }

    /** Whether it is read without SpEL's interpreter (for tests). */
    boolean isDirect() {
      return direct != null;
    }

    /** The variables it reads. */
    public Set<String> variables() {
      return Sandbox.variables(expression);
    }

    /**
     * The key the expression gives in {@code context}, with the prefix; for a missing key (see
     * {@link Values}), the shared one, or null when the request or call is to be rejected.
     *
     * @throws IllegalStateException with {@link OnError#THROW}, when the expression fails
     */
    public String evaluate(EvaluationContext context) {
      Object value;
      try {
        value = direct == null ? DirectLookup.NOT_DIRECT : direct.value(context);
        if (value == DirectLookup.NOT_DIRECT) {
          value = expression.getValue(context);
        }
      } catch (RuntimeException e) {
        if (onError == OnError.THROW) {
          throw failed(e, "key", what, text);
        }
        return missing("failed", "failed (" + LogThrottle.sanitize(e.getMessage()) + ")");
      }
      String key = Values.key(value);
      if (key != null) {
        return prefix.isEmpty() ? key : prefix + key;
      }
      return missing(value instanceof CharSequence || value == null ? "missing" : "type", Values.whyNoKey(value));
    }

    private String missing(String cause, String what) {
      long suppressed = throttle.tryAcquire(this.what + ":key:" + cause);
      if (suppressed >= 0) {
        log.log(System.Logger.Level.WARNING, this.what + ": key expression '" + text + "' " + what + "; the "
            + subject + " was " + (missingKey == MissingKey.REJECT ? rejection : "limited under the shared key '"
            + shared + "'") + throttle.note(suppressed));
      }
      return missingKey == MissingKey.REJECT ? null : shared;
    }
  }

  /** A parsed cost expression of one place. */
  public final class Cost {
    private final Expression expression;
    private final String text;
    private final String what;
    private final boolean one;

    private Cost(Expression expression, String text, String what) {
      this.expression = expression;
      this.text = text;
      this.what = what;
      this.one = text.strip().equals("1");
    }

    /** The expression's text. */
    public String text() {
      return text;
    }

    /** The variables it reads. */
    public Set<String> variables() {
      return Sandbox.variables(expression);
    }

    /**
     * The cost of a constant expression ({@code 10}, {@code 2 * 3}), as {@link Values#cost} gives
     * it; null when it is not constant, or fails (as every evaluation then would, naming it).
     */
    public Long constant() {
      if (!Sandbox.isConstant(expression)) {
        return null;
      }
      try {
        return Values.cost(expression.getValue(sandbox.context()));
      } catch (RuntimeException e) { // an EvaluationException, or an ArithmeticException of 1/0
        return null;
      }
    }

    /**
     * Refuses a constant cost no check could pass: below 1 or above {@code capacity}, the capacity
     * of {@code owner} (a policy).
     *
     * @throws IllegalArgumentException naming the place, the cost and the capacity
     */
    public void requirePossible(long capacity, String owner) {
      Long cost = constant();
      if (cost != null && (cost < 1 || cost > capacity)) {
        throw new IllegalArgumentException(what + ": cost " + text + " can never be charged: a cost must be a"
            + " number from 1 to the capacity " + capacity + " of " + owner);
      }
    }

    /**
     * The cost the expression gives in {@code context}: a whole number from 1 to {@code capacity}
     * (the most one check can be charged), a fraction rounded up.
     *
     * @throws IllegalStateException with {@link OnError#THROW}, when the expression fails or gives
     *     anything else
     */
    public long evaluate(EvaluationContext context, long capacity) {
      if (one) {
        return 1;
      }
      Object value;
      try {
        value = expression.getValue(context);
      } catch (RuntimeException e) {
        if (onError == OnError.THROW) {
          throw failed(e, "cost", what, text);
        }
        return bad("failed (" + LogThrottle.sanitize(e.getMessage()) + ")", 1, capacity);
      }
      long cost = Values.cost(value);
      if (cost == Values.NOT_A_NUMBER) {
        return bad("gave " + LogThrottle.sanitize(value) + ", not a number", 1, capacity);
      }
      if (cost < 1) {
        return bad("gave " + LogThrottle.sanitize(value) + ", below 1", 1, capacity);
      }
      if (cost > capacity) {
        return bad("gave " + LogThrottle.sanitize(value) + ", above " + capacity + ", the most one " + subject
            + " can be charged", capacity, capacity);
      }
      return cost;
    }

    /** The largest actual cost: 2^52, exact in every backend's arithmetic. */
    public static final long MAX_ACTUAL = 1L << 52;

    /**
     * An actual cost the expression gives in {@code context}, read after the work ({@code
     * costAfter}): a whole number from 0 (nothing counts) to {@link #MAX_ACTUAL}, a fraction rounded
     * up; -1 when it fails or gives anything else, with {@link OnError#CORRECT} (logged at most
     * once a minute): the caller keeps its estimate.
     *
     * @throws IllegalStateException with {@link OnError#THROW}, when the expression fails or gives
     *     anything else, naming it
     */
    public long actual(EvaluationContext context) {
      Object value;
      try {
        value = expression.getValue(context);
      } catch (RuntimeException e) {
        if (onError == OnError.THROW) {
          throw failed(e, "cost", what, text);
        }
        return badActual("failed (" + LogThrottle.sanitize(e.getMessage()) + ")");
      }
      long cost = Values.actualCost(value);
      if (cost == Values.NOT_A_NUMBER || cost > MAX_ACTUAL) {
        return badActual("gave " + LogThrottle.sanitize(value) + ", not a number from 0 to " + MAX_ACTUAL);
      }
      return cost;
    }

    private long badActual(String problem) {
      if (onError == OnError.THROW) {
        throw new IllegalStateException(what + ": cost expression '" + text + "' " + problem
            + "; the estimate was charged");
      }
      throttle.warn(log, what + ":cost", what + ": cost expression '" + text + "' " + problem + "; the estimate was"
          + " charged");
      return -1;
    }

    private long bad(String problem, long charged, long capacity) {
      if (onError == OnError.THROW) {
        throw new IllegalStateException(what + ": cost expression '" + text + "' " + problem
            + "; a cost must be a number from 1 to " + capacity);
      }
      throttle.warn(log, what + ":cost", what + ": cost expression '" + text + "' " + problem + "; the " + subject
          + " was charged " + charged);
      return charged;
    }
  }

  /** An evaluation's failure as {@link OnError#THROW} throws it: the expression's own calls' exceptions unchanged. */
  private static RuntimeException failed(RuntimeException e, String kind, String what, String text) {
    if (!(e instanceof EvaluationException)) {
      return e;
    }
    return new IllegalStateException(what + ": " + kind + " expression '" + text + "' failed: " + e.getMessage(), e);
  }

  /** The settings of a pipeline. */
  public static final class Builder {
    private final Sandbox sandbox;
    private final System.Logger log;
    private OnError onError = OnError.CORRECT;
    private MissingKey missingKey = MissingKey.SHARED_BUCKET;
    private String subject = "request";
    private String rejection = "rejected";
    private LogThrottle throttle = LogThrottle.perMinute();

    private Builder(Sandbox sandbox, System.Logger log) {
      this.sandbox = Objects.requireNonNull(sandbox);
      this.log = Objects.requireNonNull(log);
    }

    /** What an expression that fails, or a bad cost, does; default {@link OnError#CORRECT}. */
    public Builder onError(OnError onError) {
      this.onError = Objects.requireNonNull(onError);
      return this;
    }

    /** What a request or call without a key gets; default {@link MissingKey#SHARED_BUCKET}. */
    public Builder missingKey(MissingKey missingKey) {
      this.missingKey = Objects.requireNonNull(missingKey);
      return this;
    }

    /** What log lines call what is limited: {@code request} (the default), {@code call}. */
    public Builder subject(String subject) {
      this.subject = Objects.requireNonNull(subject);
      return this;
    }

    /** How log lines say a request or call without a key was rejected: {@code rejected with 400}. */
    public Builder rejection(String rejection) {
      this.rejection = Objects.requireNonNull(rejection);
      return this;
    }

    /** The throttle of log lines; default one line a minute per place and cause. */
    public Builder throttle(LogThrottle throttle) {
      this.throttle = Objects.requireNonNull(throttle);
      return this;
    }

    public Pipeline build() {
      return new Pipeline(this);
    }
  }
}

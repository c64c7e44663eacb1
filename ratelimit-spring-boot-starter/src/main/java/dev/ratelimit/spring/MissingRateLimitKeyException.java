package dev.ratelimit.spring;

/**
 * Thrown by a {@code @RateLimited} call whose key is missing (its key expression gives null, a
 * blank text or a value that is not a key) when {@code ratelimit.missing-key=reject}.
 */
public class MissingRateLimitKeyException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  MissingRateLimitKeyException(String where, String expression) {
    super("rate-limit key expression '" + expression + "' of " + where + " gave no key", null, false, false);
  }
}

package dev.ratelimit.spring;

/** Thrown when a key expression gives no key and {@code ratelimit.missing-key=reject}. */
public class MissingRateLimitKeyException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  MissingRateLimitKeyException(String where, String expression) {
    super("rate-limit key expression '" + expression + "' of " + where + " gave no key", null, false, false);
  }
}

package dev.ratelimit.servlet;

/**
 * What happens to a request whose key expression yields null or blank (the header it reads is
 * absent, say). Either way the request never bypasses the limit, and a line is logged, at most one
 * per rule per minute.
 */
public enum MissingKey {
  /**
   * Limit the request under the rule's shared key {@code <rule>:<missing>}: all requests without a
   * key share one bucket. The default.
   */
  SHARED_BUCKET,
  /** Answer {@code 400 Bad Request} with an {@code application/problem+json} body. */
  REJECT
}

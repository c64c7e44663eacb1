package dev.ratelimit.http;

/**
 * What happens to a request whose key is missing: its key expression gives null, a blank text or
 * no key at all (an array, say), or fails (the header it reads is absent, say). Either way the
 * request never bypasses the limit, and a line is logged, at most one per rule and cause a minute.
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

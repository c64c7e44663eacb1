package dev.ratelimit.service;

/** The backend failed in {@code inspect} or {@code reset}; answered with 503. */
final class BackendUnavailable extends RuntimeException {
  private static final long serialVersionUID = 1L;

  BackendUnavailable(RuntimeException cause) {
    super(cause);
  }
}

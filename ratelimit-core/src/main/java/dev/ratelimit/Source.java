package dev.ratelimit;

import dev.ratelimit.RateLimitListener.Outcome;

/** Who made a decision, and what the listener is told of it. */
enum Source {
  BACKEND(Outcome.ALLOWED, Outcome.DENIED),
  NEAR_CACHE(Outcome.ALLOWED, Outcome.DENIED_BY_NEAR_CACHE),
  FALLBACK(Outcome.FALLBACK_ALLOWED, Outcome.FALLBACK_DENIED),
  FAILURE(Outcome.FAILURE_ALLOWED, Outcome.FAILURE_DENIED);

  final Outcome allowed;
  final Outcome denied;

  Source(Outcome allowed, Outcome denied) {
    this.allowed = allowed;
    this.denied = denied;
  }
}

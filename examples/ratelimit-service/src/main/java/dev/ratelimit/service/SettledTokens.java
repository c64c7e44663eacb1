package dev.ratelimit.service;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.FailureMode;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.spi.Backend;
import java.time.Duration;
import java.time.InstantSource;

/**
 * Which reservation tokens were settled, shared by every instance through the limiter's own
 * backend: a token's identity is admitted once per TTL by a SLIDING_LOG policy of limit 1, under a
 * policy name no client can check with. It fails closed: when the backend cannot say, the settle is
 * refused (503) and the token left unspent, so a replay can never slip through an outage.
 */
final class SettledTokens {
  /** The policy name of the settled tokens' state; never one of the configured policies. */
  static final String POLICY = "reservation-token-settled";

  private final RateLimiter ledger;
  private final Policy once;

  /**
   * @param backend the service limiter's backend, which this never closes
   * @param ttl the tokens' TTL: a token is remembered at least as long as it can be settled
   */
  SettledTokens(Backend backend, Duration ttl, InstantSource clock, Duration timeout) {
    this.ledger = RateLimiter.builder().backend(backend).clock(clock).timeout(timeout)
        .failureMode(FailureMode.FAIL_CLOSED).build();
    this.once = Policy.of(1, ttl).withAlgorithm(Algorithm.SLIDING_LOG).withName(POLICY);
  }

  /**
   * Marks the token {@code id} settled.
   *
   * @return true the first time, false when it was settled before
   * @throws BackendUnavailable when the backend could not record it (nothing was settled)
   */
  boolean claim(String id) {
    Decision decision = ledger.check("reservation-token:" + id, once);
    if (decision.isDegraded()) {
      throw new BackendUnavailable(new IllegalStateException("the backend could not record a settled reservation"
          + " token"));
    }
    return decision.allowed();
  }
}

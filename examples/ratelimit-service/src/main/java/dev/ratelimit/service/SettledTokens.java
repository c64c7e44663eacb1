package dev.ratelimit.service;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.FailureMode;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.spi.Backend;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which reservation tokens were settled. On a remote backend (Redis) it is shared by every
 * instance through the limiter's own backend: a token's identity is admitted once per window by a
 * SLIDING_LOG policy of limit 1, under a policy name no client can check with, failing closed
 * (when the backend cannot say, the settle is refused with 503 and the token left unspent). On the
 * in-memory backend, where one instance is the whole service, a map of its own, bounded: the
 * in-memory store decides keys past its bound without keeping them, which would let a token be
 * settled again, so a full map refuses settles (503) instead.
 *
 * <p>Identities are kept twice the tokens' TTL: an instance whose clock is behind the issuer's by
 * less than a TTL still finds a token it accepts.
 */
final class SettledTokens {
  /** The policy name of the settled tokens' state; never one of the configured policies. */
  static final String POLICY = "reservation-token-settled";
  /** The most settled tokens the in-memory form holds at once. */
  static final int MAX_LOCAL = 1_000_000;

  private final RateLimiter ledger;
  private final Policy once;
  private final Map<String, Long> local;
  private final InstantSource clock;
  private final long keepMillis;
  private volatile long prunedAt;

  /**
   * @param backend the service limiter's backend, which this never closes
   * @param ttl the tokens' TTL
   */
  SettledTokens(Backend backend, Duration ttl, InstantSource clock, Duration timeout) {
    Duration keep = ttl.multipliedBy(2);
    this.clock = clock;
    this.keepMillis = keep.toMillis();
    if (backend.isRemote()) {
      this.ledger = RateLimiter.builder().backend(backend).clock(clock).timeout(timeout)
          .failureMode(FailureMode.FAIL_CLOSED).build();
      this.once = Policy.of(1, keep).withAlgorithm(Algorithm.SLIDING_LOG).withName(POLICY);
      this.local = null;
    } else {
      this.ledger = null;
      this.once = null;
      this.local = new ConcurrentHashMap<>();
    }
  }

  /**
   * Marks the token {@code id} settled.
   *
   * @return true the first time, false when it was settled before
   * @throws BackendUnavailable when it could not be recorded (nothing was settled)
   */
  boolean claim(String id) {
    if (local != null) {
      return claimLocally(id);
    }
    Decision decision = ledger.check("reservation-token:" + id, once);
    if (decision.isDegraded()) {
      throw new BackendUnavailable(new IllegalStateException("the backend could not record a settled reservation"
          + " token"));
    }
    return decision.allowed();
  }

  private boolean claimLocally(String id) {
    long now = clock.millis();
    if (local.size() >= MAX_LOCAL || (local.size() > 10_000 && now - prunedAt > 1_000)) {
      prunedAt = now; // those past their time go, at most once a second unless full
      for (Iterator<Long> it = local.values().iterator(); it.hasNext(); ) {
        if (it.next() <= now) {
          it.remove();
        }
      }
      if (local.size() >= MAX_LOCAL) {
        throw new BackendUnavailable(new IllegalStateException(MAX_LOCAL + " reservation tokens settled within"
            + " twice their TTL are held already; settle later, or shorten ratelimit-service.reservations.ttl"));
      }
    }
    Long before = local.putIfAbsent(id, now + keepMillis);
    if (before == null) {
      return true;
    }
    // an identity kept past its time is free again only by its expiry, never twice at once
    return before <= now && local.replace(id, before, now + keepMillis);
  }
}

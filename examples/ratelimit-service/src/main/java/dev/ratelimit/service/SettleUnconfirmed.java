package dev.ratelimit.service;

/** A settle whose backend call failed after its token was spent; answered with 503 saying so. */
final class SettleUnconfirmed extends RuntimeException {
  private static final long serialVersionUID = 1L;

  SettleUnconfirmed() {
    super("the settle could not reach the rate-limit backend, tried again within the timeout: it may or may not"
        + " have been applied. The token is spent, since sending it again could give back twice; the service's"
        + " log and ratelimit_reservation_settle_failures_total record it");
  }
}

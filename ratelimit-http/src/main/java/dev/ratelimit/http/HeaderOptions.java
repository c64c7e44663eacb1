package dev.ratelimit.http;

/**
 * Which limit headers responses carry, allowed and denied alike. No limit header is sent when a
 * decision is degraded (the limiter's backend failed and its failure mode decided): the numbers
 * would be invented.
 *
 * @param draft whether to send {@code RateLimit-Policy} and {@code RateLimit} as defined by
 *     draft-ietf-httpapi-ratelimit-headers-11 (structured-field lists, one item per policy checked)
 * @param legacy whether to send {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining} and
 *     {@code X-RateLimit-Reset} (seconds, rounded up) of the most limiting policy
 */
public record HeaderOptions(boolean draft, boolean legacy) {
  /** The default: the draft's headers on, the legacy ones off. */
  public static final HeaderOptions DEFAULT = new HeaderOptions(true, false);
}

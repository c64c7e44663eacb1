package dev.ratelimit;

/**
 * The six rate-limiting algorithms. Each backend evaluates all of them with the same arithmetic,
 * to the microsecond (see the README's algorithms table for what each is for).
 */
public enum Algorithm {
  /** A counter per aligned window of length W; allows up to 2×L across a window edge. */
  FIXED_WINDOW,
  /** A log of accepted units in the last W; exact, memory grows with the limit. */
  SLIDING_LOG,
  /** Two fixed-window counters blended by the position in the current window; cheap and smooth. */
  SLIDING_WINDOW,
  /** A bucket of {@code burst} tokens refilled at L per W; a new bucket is full. */
  TOKEN_BUCKET,
  /** The generic cell rate algorithm: a theoretical arrival time; the same arrivals as TOKEN_BUCKET. */
  GCRA,
  /** Shaping: admission as GCRA, and each admitted check carries a {@code delay} so work leaves evenly. */
  LEAKY_BUCKET;

  /** Whether the policy's capacity is its {@code burst} (true) or its {@code limit} (window algorithms). */
  public boolean usesBurst() {
    return this == TOKEN_BUCKET || this == GCRA || this == LEAKY_BUCKET;
  }

  /** The lower-case short name used in derived policy names and storage keys, e.g. {@code "gcra"}. */
  public String shortName() {
    return switch (this) {
      case FIXED_WINDOW -> "fw";
      case SLIDING_LOG -> "sl";
      case SLIDING_WINDOW -> "sw";
      case TOKEN_BUCKET -> "tb";
      case GCRA -> "gcra";
      case LEAKY_BUCKET -> "lb";
    };
  }
}

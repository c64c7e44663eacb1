package dev.ratelimit.bench.frontdoor;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What stands in front of {@code GET /work}: one row of the front-door table. Chosen by {@code
 * bench.mode}; each mode is a few default properties, which the command line can still override.
 */
enum Mode {
  /** No limiter: the starter is off. */
  NONE(Limiter.NONE, false),
  /** Our servlet filter, a rule from {@code ratelimit.filter.rules}, on the in-memory backend. */
  FILTER_MEMORY(Limiter.FILTER, false),
  /** Our {@code @RateLimited} on the controller method, on the in-memory backend. */
  ANNOTATION_MEMORY(Limiter.ANNOTATION, false),
  /** Our servlet filter on the Redis backend. */
  FILTER_REDIS(Limiter.FILTER, true),
  /** Our {@code @RateLimited} on the Redis backend. */
  ANNOTATION_REDIS(Limiter.ANNOTATION, true),
  /** Bucket4j's in-memory proxy manager (Caffeine), called from a filter as its Boot starter does. */
  BUCKET4J_MEMORY(Limiter.BUCKET4J, false),
  /** Bucket4j's Redisson proxy manager, called from a filter as its Boot starter does. */
  BUCKET4J_REDIS(Limiter.BUCKET4J, true);

  /** Which front door limits. */
  enum Limiter { NONE, FILTER, ANNOTATION, BUCKET4J }

  private final Limiter limiter;
  private final boolean redis;

  Mode(Limiter limiter, boolean redis) {
    this.limiter = limiter;
    this.redis = redis;
  }

  /** The mode's name on the command line: {@code filter-memory} for {@link #FILTER_MEMORY}. */
  String id() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  Limiter limiter() {
    return limiter;
  }

  /** Whether state lives in Redis, so that {@code bench.redis-url} is needed. */
  boolean redis() {
    return redis;
  }

  /**
   * The mode named {@code id}, e.g. {@code filter-redis}.
   *
   * @throws IllegalArgumentException naming {@code bench.mode} and every valid value
   */
  static Mode of(String id) {
    for (Mode mode : values()) {
      if (mode.id().equals(id == null ? null : id.trim())) {
        return mode;
      }
    }
    throw new IllegalArgumentException("bench.mode must be one of "
        + Arrays.stream(values()).map(Mode::id).collect(Collectors.joining(", ")) + "; was '" + id + "'");
  }

  /**
   * The properties this mode sets: which of our front doors is on ({@code ratelimit.enabled},
   * {@code ratelimit.filter.enabled}, {@code bench.annotation}), where state lives, and whether the
   * Bucket4j filter is registered ({@code bench.bucket4j}).
   */
  Map<String, Object> properties(String redisUrl) {
    Map<String, Object> p = new LinkedHashMap<>();
    boolean ours = limiter == Limiter.FILTER || limiter == Limiter.ANNOTATION;
    p.put("ratelimit.enabled", ours);
    p.put("ratelimit.filter.enabled", limiter == Limiter.FILTER);
    p.put("bench.annotation", limiter == Limiter.ANNOTATION);
    p.put("bench.bucket4j", limiter != Limiter.BUCKET4J ? "off" : redis ? "redis" : "memory");
    if (ours) {
      p.put("ratelimit.backend", redis ? "redis" : "memory");
      if (redis) {
        p.put("ratelimit.redis.url", redisUrl);
      }
    }
    return p;
  }
}

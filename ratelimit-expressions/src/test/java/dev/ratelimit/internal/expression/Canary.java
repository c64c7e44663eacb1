package dev.ratelimit.internal.expression;

import java.util.concurrent.atomic.AtomicInteger;

/** Counts every construction and static call: a sandboxed expression must never reach it. */
public final class Canary {
  static final AtomicInteger TRIPS = new AtomicInteger();

  /** Trips the canary. */
  public Canary() {
    TRIPS.incrementAndGet();
  }

  /** Trips the canary. */
  public static int trip() {
    return TRIPS.incrementAndGet();
  }
}

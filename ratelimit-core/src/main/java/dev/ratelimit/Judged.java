package dev.ratelimit;

/**
 * An all-or-nothing answer, one decision per policy, all from one source.
 *
 * @param allowed whether every decision allows
 * @param decisions one per policy, in order
 * @param source who made them
 */
record Judged(boolean allowed, Decision[] decisions, Source source) {
  static Judged of(MultiDecision m, Source source) {
    return new Judged(m.allowed(), m.decisions().toArray(Decision[]::new), source);
  }
}

package dev.ratelimit.redis;

import java.util.ArrayList;
import java.util.List;

/**
 * One call of check_batch.lua for several queued checks: KEYS are the checks' keys in order; ARGV
 * the batch's distinct policies (a line each), its base time (the least t) and a line per check of
 * what differs from check to check (see the script).
 *
 * @param keys the script's KEYS
 * @param args the script's ARGV
 */
record BatchCall(List<Object> keys, Object[] args) {
  /**
   * Several checks as one call of check_batch.lua: KEYS are the checks' keys in order; ARGV the
   * batch's distinct policies (a line each), its base time (the least t) and a line per check of
   * what differs from check to check (see the script).
   */
  static BatchCall of(List<Dispatcher.Check> checks, Lua checkAll) {
    long base = Long.MAX_VALUE;
    for (Dispatcher.Check c : checks) {
      if (time(c, checkAll) instanceof Long t) {
        base = Math.min(base, t);
      }
    }
    base = base == Long.MAX_VALUE ? 0 : base;
    List<Object> batchKeys = new ArrayList<>(checks.size() * 2);
    List<Object[]> policies = new ArrayList<>(4);
    StringBuilder policyLines = new StringBuilder(32);
    StringBuilder checkLines = new StringBuilder(16 * checks.size());
    for (Dispatcher.Check c : checks) {
      Object[] a = c.args();
      batchKeys.addAll(c.keys());
      checkLines.append(c.keys().size()).append(' ');
      Object cost;
      if (c.lua() == checkAll) { // check_all.lua's ARGV: t or 'server', cost, count, "algorithm window limit burst" each
        for (int i = 0; i < (Integer) a[2]; i++) {
          String[] spec = ((String) a[3 + i]).split(" ");
          Object[] policy = {spec[0], null, null, Long.valueOf(spec[1]), Long.valueOf(spec[2]), Long.valueOf(spec[3]), "1"};
          checkLines.append(i == 0 ? "" : "+").append(policyNumber(policies, policy, policyLines));
        }
        cost = a[1];
      } else { // check.lua's ARGV: algorithm, t or 'server', cost, window, limit, burst, apply
        checkLines.append(policyNumber(policies, a, policyLines));
        cost = a[2];
      }
      checkLines.append(' ');
      if (time(c, checkAll) instanceof Long t) {
        checkLines.append(t - base);
      } else {
        checkLines.append(time(c, checkAll));
      }
      checkLines.append(' ').append(cost).append('\n');
    }
    return new BatchCall(batchKeys, new Object[] {policyLines.toString(), base, checkLines.toString()});
  }

  /** A queued check's time: a Long, or 'server'. */
  private static Object time(Dispatcher.Check c, Lua checkAll) {
    return c.lua() == checkAll ? c.args()[0] : c.args()[1];
  }

  /**
   * The 1-based number of the policy in check.lua's ARGV {@code a} among {@code seen}; when new, it
   * is added, and its line to {@code lines}.
   */
  private static int policyNumber(List<Object[]> seen, Object[] a, StringBuilder lines) {
    for (int i = 0; i < seen.size(); i++) {
      Object[] s = seen.get(i);
      if (s[0].equals(a[0]) && s[3].equals(a[3]) && s[4].equals(a[4]) && s[5].equals(a[5]) && s[6].equals(a[6])) {
        return i + 1;
      }
    }
    seen.add(a);
    lines.append(a[0]).append(' ').append(a[3]).append(' ').append(a[4]).append(' ').append(a[5])
        .append(' ').append(a[6]).append('\n');
    return seen.size();
  }
}

package dev.ratelimit.redis;

import java.util.AbstractList;
import java.util.List;
import java.util.RandomAccess;
import org.redisson.client.RedisException;

/**
 * Reads {@code check_batch.lua}'s reply: one string, one line per check, each ended by a newline:
 * the integers of {@code check.lua}'s reply separated by spaces, or {@code E}, a space and the
 * error message of a check that raised one. One string is one element for the client to decode,
 * where a list of integers is eight or more per check.
 */
final class BatchReply {
  private BatchReply() {}

  /**
   * Completes each check's reply with its line (as the list of integers {@code check.lua} would
   * have returned), or fails it with its error, or, when the reply has no well-formed line for it,
   * with the reply itself in the message.
   */
  static void deliver(List<Dispatcher.Check> checks, String reply) {
    int at = 0;
    for (Dispatcher.Check c : checks) {
      int end = reply == null ? -1 : reply.indexOf('\n', at);
      if (end < 0) {
        c.reply().completeExceptionally(new RedisException("unexpected batch reply " + reply));
        continue;
      }
      if (end > at && reply.charAt(at) == 'E') {
        c.reply().completeExceptionally(new RedisException(reply.substring(Math.min(at + 2, end), end)));
      } else {
        try {
          c.reply().complete(integers(reply, at, end));
        } catch (NumberFormatException e) {
          c.reply().completeExceptionally(new RedisException("unexpected batch reply line '"
              + reply.substring(at, end) + "'", e));
        }
      }
      at = end + 1;
    }
  }

  /** The integers separated by single spaces in {@code s} from {@code from} to {@code to}. */
  static List<Object> integers(String s, int from, int to) {
    int count = 1;
    for (int i = from; i < to; i++) {
      count += s.charAt(i) == ' ' ? 1 : 0;
    }
    long[] values = new long[count];
    int start = from;
    for (int v = 0; v < count; v++) {
      int end = s.indexOf(' ', start);
      end = end < 0 || end > to ? to : end;
      values[v] = integer(s, start, end);
      start = end + 1;
    }
    return new Longs(values);
  }

  /** The integer from {@code start} to {@code end}: up to 18 digits by hand, longer ones by {@link Long#parseLong}. */
  private static long integer(String s, int start, int end) {
    boolean negative = start < end && s.charAt(start) == '-';
    int digits = negative ? start + 1 : start;
    if (end - digits > 18 || end == digits) {
      return Long.parseLong(s, start, end, 10);
    }
    long value = 0;
    for (int i = digits; i < end; i++) {
      char ch = s.charAt(i);
      if (ch < '0' || ch > '9') {
        throw new NumberFormatException("not an integer: '" + s.substring(start, end) + "'");
      }
      value = value * 10 + (ch - '0');
    }
    return negative ? -value : value;
  }

  /** A reply's integers as the list of {@code Long} Redisson would have decoded, without boxing them all. */
  private static final class Longs extends AbstractList<Object> implements RandomAccess {
    private final long[] values;

    Longs(long[] values) {
      this.values = values;
    }

    @Override
    public Object get(int index) {
      return values[index];
    }

    @Override
    public int size() {
      return values.length;
    }
  }
}

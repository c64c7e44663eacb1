package dev.ratelimit.memory;

import dev.ratelimit.spi.Mark;

/**
 * The reservations of one state: its identity, until when a reservation's units may still come
 * back, and (GCRA, LEAKY_BUCKET, TOKEN_BUCKET) how much has been given back, {@code given} µs as
 * {@code givenUs + givenFrac/L}. Created by the first reservation, dropped with its state. Twin of
 * the ledger key in reserve.lua.
 *
 * <p>The give-back rule of the time-based algorithms (ARCHITECTURE §4): a reservation's mark is
 * {@code M = tat + given} right after it; a give-back of {@code u} units at {@code t} returns
 * {@code g = clamp(M − given − t, 0, u·T)}, lowering {@code tat} and raising {@code given} by
 * {@code g}. Nothing lowers {@code tat + given}, so {@code tat − g >= t}; and with nothing in
 * between, {@code g} is exactly what the reservation added and has not yet refilled.
 */
final class Ledger {
  /** The greatest debt a forced charge leaves in the time-based algorithms: 2^52 µs past now. */
  static final long MAX_DEBT_MICROS = 1L << 52;
  /** The greatest count a forced charge leaves in a window: 2^52 units. */
  static final long MAX_COUNT = 1L << 52;

  final long id;
  /** When every mark of this ledger is worth nothing, in epoch µs: the ledger no longer matters. */
  long until;
  long givenUs;
  long givenFrac;

  private Ledger(long id, long until) {
    this.id = id;
    this.until = until;
  }

  /**
   * The ledger a reservation at {@code t} records in: {@code current} while it matters, else a new
   * one named {@code id}; it then matters at least until {@code until}.
   */
  static Ledger open(Ledger current, long id, long t, long until) {
    Ledger ledger = current != null && current.until > t ? current : new Ledger(id, until);
    ledger.until = Math.max(ledger.until, until);
    return ledger;
  }

  /**
   * {@link #open} for a reservation of a time-based state whose tat is now {@code tatUs +
   * tatFrac/L}: its marks are worth something until tat, rounded up.
   */
  static Ledger openUntilTat(Ledger current, long id, long t, long tatUs, long tatFrac) {
    return open(current, id, t, tatUs + (tatFrac > 0 ? 1 : 0));
  }

  /** Whether {@code ledger} is the one {@code mark} was recorded in, and still matters at {@code t}. */
  static boolean holds(Ledger ledger, Mark mark, long t) {
    return ledger != null && ledger.id == mark.ledger() && ledger.until > t;
  }

  /** The mark of a time-based state whose tat is {@code tatUs + tatFrac/L}: tat + given. */
  Mark mark(long tatUs, long tatFrac, long limit) {
    long f = tatFrac + givenFrac;
    long u = tatUs + givenUs;
    if (f >= limit) {
      u++;
      f -= limit;
    }
    return new Mark(u, f, id);
  }

  /**
   * What a give-back of {@code units} at {@code t} returns, in 1/L µs (credits for a token bucket):
   * {@code clamp(M − given − t, 0, units·W)}.
   */
  long credit(Mark mark, long t, long units, long window, long limit) {
    long du = mark.at() - givenUs - t;
    long df = mark.fraction() - givenFrac; // -L < df < L
    if (du < 0 || (du == 0 && df <= 0)) {
      return 0;
    }
    long most = units * window; // units·T in 1/L µs; at most burst·W <= 2^52 (Policy)
    if (du > most / limit + 1) {
      return most;
    }
    return Math.min(du * limit + df, most);
  }

  /** Records {@code g} (1/L µs) as given back. */
  void given(long g, long limit) {
    givenUs += g / limit;
    givenFrac += g % limit;
    if (givenFrac >= limit) {
      givenUs++;
      givenFrac -= limit;
    }
  }
}

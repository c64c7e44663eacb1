package dev.ratelimit.spi;

/**
 * Where a reservation's units went, as its backend recorded them: what a later {@link
 * Command.GiveBack} needs to return them, and no more. Its numbers mean what the policy's
 * algorithm says (ARCHITECTURE §4): the window start (FIXED_WINDOW, SLIDING_WINDOW), the log time
 * (SLIDING_LOG), or the theoretical arrival time plus what had been given back before, as
 * {@code at + fraction/L} µs (GCRA, LEAKY_BUCKET, TOKEN_BUCKET). A value: a decision service can
 * carry it in a token.
 *
 * @param at a time in epoch µs, per algorithm as above
 * @param fraction the fraction of a µs, in units of 1/limit, for the algorithms that keep one; else 0
 * @param ledger the identity of the state's ledger of reservations when this one was made: a
 *     give-back into another ledger (the state was reset, expired or lost) returns nothing
 */
public record Mark(long at, long fraction, long ledger) {}

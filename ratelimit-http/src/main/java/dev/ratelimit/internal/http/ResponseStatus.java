package dev.ratelimit.internal.http;

/**
 * {@code #response} of a rule's {@code count-when}: what is known of the response once the chain
 * has run.
 *
 * @param status the response's status
 */
public record ResponseStatus(int status) {}

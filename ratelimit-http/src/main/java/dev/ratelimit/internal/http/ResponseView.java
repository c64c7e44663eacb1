package dev.ratelimit.internal.http;

import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * {@code #response} of a rule's {@code count-when} and {@code cost-after}: what is known of the
 * response once the chain has run.
 *
 * @param status the response's status ({@code #response.status})
 * @param headers its headers by name, case-insensitive, first value, read-only
 *     ({@code #response.headers['X-Tokens']})
 */
public record ResponseView(int status, Map<String, String> headers) {
  /**
   * A response read through its server's API, its headers read only when an expression asks.
   *
   * @param header the first value of a header, case-insensitive; null when absent
   * @param names the names of the response's headers
   */
  public static ResponseView of(int status, Function<String, String> header,
      Supplier<? extends Iterable<String>> names) {
    return new ResponseView(status, new HeaderMap(header, names));
  }
}

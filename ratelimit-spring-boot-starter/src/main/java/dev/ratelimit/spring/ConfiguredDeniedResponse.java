package dev.ratelimit.spring;

import dev.ratelimit.http.DeniedResponse;

/**
 * A {@link DeniedResponse} from {@code ratelimit.denied-response} or a filter rule's {@code
 * denied-response}, each bad value refused at start-up naming its property. Loaded only where the
 * servlet API is: {@link DeniedResponse} writes servlet responses.
 */
final class ConfiguredDeniedResponse {
  private ConfiguredDeniedResponse() {}

  /**
   * The response {@code properties} make over {@code base}: their set fields replace base's, their
   * headers are added.
   *
   * @param prefix the properties' name, e.g. {@code ratelimit.denied-response}
   * @throws IllegalArgumentException naming the property at fault
   */
  static DeniedResponse build(RateLimitProperties.Denied properties, DeniedResponse base, String prefix) {
    if (!properties.anySet()) {
      return base;
    }
    DeniedResponse.Builder builder = DeniedResponse.builder(base);
    if (properties.getStatus() != null) {
      set(prefix + ".status", () -> builder.status(properties.getStatus()));
    }
    if (properties.getContentType() != null) {
      set(prefix + ".content-type", () -> builder.contentType(properties.getContentType()));
    }
    if (properties.getBody() != null) {
      set(prefix + ".body", () -> builder.body(properties.getBody()));
    }
    properties.getHeaders().forEach((name, value) ->
        set(prefix + ".headers." + name, () -> builder.header(name, value)));
    try {
      return builder.build();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(prefix + ".content-type: " + e.getMessage(), e);
    }
  }

  private static void set(String property, Runnable setter) {
    try {
      setter.run();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(property + ": " + e.getMessage(), e);
    }
  }
}

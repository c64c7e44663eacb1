package dev.ratelimit.service;

import java.io.IOException;

/** Thrown while reading a request body that grows past the limit; answered with 400. */
final class BodyTooLarge extends IOException {
  private static final long serialVersionUID = 1L;

  BodyTooLarge(int limit) {
    super("request body larger than " + limit + " bytes (ratelimit-service.max-body-bytes)");
  }
}

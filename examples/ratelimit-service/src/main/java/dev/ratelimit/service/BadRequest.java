package dev.ratelimit.service;

/** A request the service refuses with 400, naming the field at fault and why. */
final class BadRequest extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final String field;

  BadRequest(String field, String reason) {
    super(reason);
    this.field = field;
  }

  String field() {
    return field;
  }
}

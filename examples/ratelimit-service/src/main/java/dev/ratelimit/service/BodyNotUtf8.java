package dev.ratelimit.service;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** Thrown while reading a JSON body that is not valid UTF-8 (RFC 8259 requires it); answered with 400. */
final class BodyNotUtf8 extends IOException {
  private static final long serialVersionUID = 1L;

  private BodyNotUtf8(int offset, byte value) {
    super(String.format("the body is not valid UTF-8 (byte 0x%02X at offset %d): send JSON as UTF-8 (RFC 8259),"
        + " characters outside it as \\uXXXX escapes if need be", value & 0xff, offset));
  }

  /** The failure for {@code bytes} when they are not valid UTF-8, else null. */
  static BodyNotUtf8 check(byte[] bytes) {
    CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
    ByteBuffer in = ByteBuffer.wrap(bytes);
    CharBuffer out = CharBuffer.allocate(1024);
    while (true) {
      CoderResult result = decoder.decode(in, out, true);
      if (result.isError()) {
        return new BodyNotUtf8(in.position(), bytes[in.position()]);
      }
      if (result.isUnderflow()) {
        return null;
      }
      out.clear();
    }
  }
}

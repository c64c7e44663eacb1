package dev.ratelimit.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** A script's text and its SHA-1, which is what Redis names it by. */
record Lua(String text, String sha) {
  Lua(String text) {
    this(text, sha1(text));
  }

  private static String sha1(String text) {
    try {
      return HexFormat.of().formatHex(
          MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is required of every JVM", e);
    }
  }
}

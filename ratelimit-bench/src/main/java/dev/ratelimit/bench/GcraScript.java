package dev.ratelimit.bench;

import dev.ratelimit.Algorithm;
import dev.ratelimit.redis.RedisBackend;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The exact text of the Redis backend's one-policy GCRA script ({@link RedisBackend#checkScript}).
 * Its SHA-1 is the name the backend runs it by; {@code SCRIPT EXISTS} on a server the backend has
 * loaded its scripts on confirms it.
 *
 * <p>ARGV: {@code gcra, now µs, cost, window µs, limit, burst, apply ("1")}; KEYS: the one state key.
 */
public final class GcraScript {
  private GcraScript() {}

  /** The script text. */
  public static String text() {
    return RedisBackend.checkScript(Algorithm.GCRA);
  }

  /** The SHA-1 of {@link #text()}, lower-case hex, as {@code SCRIPT LOAD} returns it. */
  public static String sha1() {
    return sha1(text());
  }

  /** The SHA-1 of {@code text} (UTF-8), lower-case hex. */
  public static String sha1(String text) {
    try {
      return HexFormat.of().formatHex(
          MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is required of every JVM", e);
    }
  }
}

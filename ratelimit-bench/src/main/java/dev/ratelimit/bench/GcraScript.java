package dev.ratelimit.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The exact text of the Redis backend's one-policy GCRA script, assembled the way the backend
 * assembles it: the resources {@code dev/ratelimit/redis/prelude.lua}, {@code gcra.lua} and
 * {@code check.lua} of ratelimit-redis, joined with {@code "\n"}. Its SHA-1 is the name the backend
 * runs it by; {@code SCRIPT EXISTS} on a server the backend has loaded its scripts on confirms it.
 *
 * <p>ARGV: {@code gcra, now µs, cost, window µs, limit, burst, apply ("1")}; KEYS: the one state key.
 */
public final class GcraScript {
  private static final String DIR = "dev/ratelimit/redis/";

  private GcraScript() {}

  /** The script text. */
  public static String text() {
    return resource("prelude.lua") + "\n" + resource("gcra.lua") + "\n" + resource("check.lua");
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

  private static String resource(String name) {
    ClassLoader loader = GcraScript.class.getClassLoader();
    try (InputStream in = loader.getResourceAsStream(DIR + name)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + DIR + name + " (ratelimit-redis on the class path?)");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

package dev.ratelimit.spi;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Objects;

/**
 * The bounded form in which a backend keeps a key, so that memory per key does not grow with the
 * key's length: a key of at most {@value #MAX_KEPT} characters is kept as it is; a longer one as
 * its first {@value #PREFIX} characters, {@code '#'} and the SHA-256 of all its characters (of its
 * UTF-16 code units, so keys with lone surrogates hash apart too), {@value #HASHED_LENGTH}
 * characters in all. No key kept as it is has that length, so a short key never meets a long
 * key's form, and two long keys share one only if SHA-256 collides.
 */
public final class Keys {
  /** The longest key kept as it is. */
  public static final int MAX_KEPT = 128;
  /** The characters of a long key kept in front of its hash, for logs and diagnostics. */
  static final int PREFIX = 64;
  /** The length of a long key's form. */
  public static final int HASHED_LENGTH = PREFIX + 1 + 64;

  private Keys() {}

  /** {@code key} itself when at most {@value #MAX_KEPT} characters long, else its hashed form. */
  public static String bounded(String key) {
    Objects.requireNonNull(key, "key");
    if (key.length() <= MAX_KEPT) {
      return key;
    }
    byte[] units = new byte[key.length() * 2];
    for (int i = 0; i < key.length(); i++) {
      char ch = key.charAt(i);
      units[2 * i] = (byte) (ch >>> 8);
      units[2 * i + 1] = (byte) ch;
    }
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(units);
      return key.substring(0, PREFIX) + '#' + HexFormat.of().formatHex(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }
}

package dev.ratelimit.redis;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Policy;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The key layout {@code prefix:{key}:policy:algorithm[:seq]}: one key per (key, policy) holding
 * the state (the window algorithms keep their newest window and its count in it), and for
 * SLIDING_LOG the sequence that names its entries. The user key is the hash tag, so
 * every key of one check (and of a multi-policy check) lands in one Redis Cluster slot. Key and
 * policy name are escaped so that no two (key, policy) pairs share a Redis key: {@code % { } : #},
 * white space, control characters and surrogates become {@code %XXXX} (the UTF-16 unit in hex), an
 * injective code; a part longer than
 * {@value #MAX_PART} characters once escaped becomes {@code #} and its SHA-256 in hex.
 */
final class RedisKeys {
  /** The longest escaped part kept as it is. */
  static final int MAX_PART = 128;
  /** Redis Cluster's hash slots. */
  static final int SLOTS = 16384;

  private static final HexFormat HEX = HexFormat.of().withUpperCase();

  private final String prefix;
  private final Map<String, String> policyParts = new ConcurrentHashMap<>();

  RedisKeys(String prefix) {
    this.prefix = prefix;
  }

  /**
   * The state keys of {@code key} under {@code policy}, as the scripts expect them: one key per
   * (key, policy) for every algorithm but SLIDING_LOG, which adds the sequence naming its entries.
   */
  List<Object> of(String key, Policy policy) {
    String base = base(key, policy);
    return policy.algorithm() == Algorithm.SLIDING_LOG ? List.of(base, base + ":seq") : List.of(base);
  }

  /** The key of the ledger of reservations of {@code key} under {@code policy} (same hash tag). */
  String ledger(String key, Policy policy) {
    return base(key, policy) + ":ledger";
  }

  /** The marker of settle {@code id} of a reservation of {@code key} whose first policy is {@code policy} (same hash tag). */
  String settled(String key, Policy policy, long id) {
    return base(key, policy) + ":settled:" + id;
  }

  /** The state keys and the ledger key of {@code key} under {@code policy}: what a reset deletes. */
  List<Object> all(String key, Policy policy) {
    List<Object> all = new java.util.ArrayList<>(of(key, policy));
    all.add(ledger(key, policy));
    return all;
  }

  /** The script's name of an algorithm. */
  static String scriptName(Algorithm algorithm) {
    return switch (algorithm) {
      case FIXED_WINDOW -> "fixed_window";
      case SLIDING_LOG -> "sliding_log";
      case SLIDING_WINDOW -> "sliding_window";
      case TOKEN_BUCKET -> "token_bucket";
      case GCRA -> "gcra";
      case LEAKY_BUCKET -> "leaky_bucket";
    };
  }

  private String base(String key, Policy policy) {
    String policyPart = policyParts.computeIfAbsent(policy.name(), RedisKeys::part);
    return prefix + ":{" + part(key) + "}:" + policyPart + ":" + policy.algorithm().shortName();
  }

  /**
   * The escaped (or hashed) form of one user-supplied part. A long part is hashed by its UTF-8
   * bytes; one with a lone surrogate, which has no UTF-8 form (the encoder writes {@code ?} for it,
   * so two such parts could share bytes), by its escaped form, marked {@code #u}: not hex, so the
   * two kinds of hash never meet.
   */
  static String part(String raw) {
    String escaped = escape(raw);
    if (escaped.length() <= MAX_PART) {
      return escaped;
    }
    return hasLoneSurrogate(raw) ? "#u" + sha256(escaped) : "#" + sha256(raw);
  }

  private static boolean hasLoneSurrogate(String s) {
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      if (Character.isHighSurrogate(ch) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(ch)) {
        return true;
      }
    }
    return false;
  }

  static String escape(String raw) {
    int i = 0;
    while (i < raw.length() && isPlain(raw.charAt(i))) {
      i++;
    }
    if (i == raw.length()) {
      return raw;
    }
    StringBuilder out = new StringBuilder(raw.length() + 16).append(raw, 0, i);
    for (; i < raw.length(); i++) {
      char ch = raw.charAt(i);
      if (isPlain(ch)) {
        out.append(ch);
      } else {
        out.append('%').append(HEX.toHexDigits(ch));
      }
    }
    return out.toString();
  }

  /** Characters kept as they are: all but {@code % { } : #}, white space and ISO control characters. */
  private static boolean isPlain(char ch) {
    return ch > ' ' && ch != '%' && ch != '{' && ch != '}' && ch != ':' && ch != '#' && ch != 0x7F
        && !Character.isISOControl(ch) && !Character.isWhitespace(ch) && !Character.isSurrogate(ch);
  }

  private static String sha256(String raw) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(raw.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }

  /**
   * The Cluster hash slot of {@code redisKey}: CRC16 (XMODEM) of its hash tag, the text between the
   * first '{' and the next '}' when not empty, else of the whole key, modulo {@value #SLOTS}.
   */
  static int slot(String redisKey) {
    byte[] bytes = redisKey.getBytes(StandardCharsets.UTF_8);
    int from = 0;
    int to = bytes.length;
    int open = redisKey.indexOf('{');
    if (open >= 0) {
      int close = redisKey.indexOf('}', open + 1);
      if (close > open + 1) {
        // '{' and '}' are ASCII: their UTF-8 offsets are those of the UTF-8 prefix
        from = redisKey.substring(0, open + 1).getBytes(StandardCharsets.UTF_8).length;
        to = from + redisKey.substring(open + 1, close).getBytes(StandardCharsets.UTF_8).length;
      }
    }
    int crc = 0;
    for (int i = from; i < to; i++) {
      crc ^= (bytes[i] & 0xFF) << 8;
      for (int bit = 0; bit < 8; bit++) {
        crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
      }
    }
    return (crc & 0xFFFF) % SLOTS;
  }
}

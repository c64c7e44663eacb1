package dev.ratelimit.redis;

import dev.ratelimit.Algorithm;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.Map;

/**
 * The Lua sources, assembled from the {@code .lua} resources beside this class: a shared prelude,
 * the algorithm files, and a main ({@code check.lua} for one policy, {@code check_all.lua} for
 * several). GCRA and LEAKY_BUCKET share {@code gcra.lua}.
 */
final class Scripts {
  private final Map<Algorithm, String> check = new EnumMap<>(Algorithm.class);
  private final String checkAll;
  private final String checkBatch;

  Scripts() {
    String prelude = resource("prelude.lua");
    StringBuilder all = new StringBuilder(prelude);
    for (Algorithm algorithm : Algorithm.values()) {
      String file = file(algorithm);
      check.put(algorithm, prelude + "\n" + resource(file) + "\n" + resource("check.lua"));
      if (algorithm != Algorithm.LEAKY_BUCKET) {
        all.append('\n').append(resource(file));
      }
    }
    String algorithms = all.toString();
    checkAll = algorithms + "\n" + resource("check_all.lua");
    checkBatch = algorithms + "\n" + resource("check_batch.lua");
  }

  /** The script that checks one policy of {@code algorithm}. */
  String check(Algorithm algorithm) {
    return check.get(algorithm);
  }

  /** The script that checks several policies at once. */
  String checkAll() {
    return checkAll;
  }

  /** The script that runs several single-policy checks one after the other. */
  String checkBatch() {
    return checkBatch;
  }

  private static String file(Algorithm algorithm) {
    return switch (algorithm) {
      case FIXED_WINDOW -> "fixed_window.lua";
      case SLIDING_LOG -> "sliding_log.lua";
      case SLIDING_WINDOW -> "sliding_window.lua";
      case TOKEN_BUCKET -> "token_bucket.lua";
      case GCRA, LEAKY_BUCKET -> "gcra.lua";
    };
  }

  private static String resource(String name) {
    try (InputStream in = Scripts.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IllegalStateException("missing script resource dev/ratelimit/redis/" + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}

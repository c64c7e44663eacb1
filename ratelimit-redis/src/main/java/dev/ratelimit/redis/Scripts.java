package dev.ratelimit.redis;

import dev.ratelimit.Algorithm;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.Map;

/**
 * The Lua sources, assembled from the {@code .lua} resources beside this class: the shared
 * prelude, the files of the algorithms a script may run, a generated registry of them, the shared
 * functions it calls, and a main: {@code check.lua} for one policy (after {@code check_one.lua};
 * only its own algorithm's file: every function a script defines is made again on each call, so a
 * check of GCRA does not pay for the sliding log), {@code check_all.lua} for several policies of
 * one key (after {@code check_many.lua}) and {@code check_batch.lua} for several checks of either
 * kind (after both; these two with every algorithm). GCRA and LEAKY_BUCKET share
 * {@code gcra.lua}, and so their scripts. Reservations: {@code reserve.lua} (after
 * {@code check_many.lua}) and {@code settle.lua}, each after {@code ledger.lua} and every
 * algorithm's {@code NAME_reserve.lua}, their bodies in {@code reserve_main.lua} and {@code
 * settle_main.lua}, which {@code reservation_batch.lua} runs for several of them.
 */
final class Scripts {
  /** The algorithm files; a script's set of them is a bit mask in this order. */
  private static final String[] FILES = {"fixed_window", "sliding_log", "sliding_window", "token_bucket", "gcra"};
  private static final int ALL = (1 << FILES.length) - 1;

  private final String prelude = resource("prelude.lua");
  private final String[] files = new String[FILES.length];
  private final String checkOne = resource("check_one.lua");
  private final String checkMany = resource("check_many.lua");
  private final Map<Algorithm, String> check = new EnumMap<>(Algorithm.class);
  private final String checkAll;
  private final String checkBatch;
  private final String reserve;
  private final String settle;
  private final String reservationBatch;

  Scripts() {
    for (int i = 0; i < FILES.length; i++) {
      files[i] = resource(FILES[i] + ".lua");
    }
    for (Algorithm algorithm : Algorithm.values()) {
      check.put(algorithm, assemble(1 << file(algorithm), "check.lua", checkOne));
    }
    checkAll = assemble(ALL, "check_all.lua", checkMany);
    String batchLine = resource("batch_line.lua");
    checkBatch = assemble(ALL, "check_batch.lua", checkOne, checkMany, batchLine);
    String reservations = reservations();
    String reserveMain = resource("reserve_main.lua");
    String settleMain = resource("settle_main.lua");
    reserve = assemble(ALL, "reserve.lua", checkMany, reservations, reserveMain);
    settle = assemble(ALL, "settle.lua", reservations, settleMain);
    reservationBatch = assemble(ALL, "reservation_batch.lua", checkMany, reservations, reserveMain, settleMain,
        batchLine);
  }

  /** The script that runs several reserves and settles one after the other. */
  String reservationBatch() {
    return reservationBatch;
  }

  /** The script that reserves one key's policies, all or nothing, and answers their marks. */
  String reserve() {
    return reserve;
  }

  /** The script that gives back into, or charges, one key's policies. */
  String settle() {
    return settle;
  }

  /**
   * ledger.lua, every algorithm's reservation file ({@code NAME_reserve.lua}: kept apart so that a
   * check's script does not define what only reservations run), and their registries.
   */
  private static String reservations() {
    StringBuilder script = new StringBuilder(resource("ledger.lua"));
    StringBuilder reserved = new StringBuilder();
    StringBuilder giveBacks = new StringBuilder();
    StringBuilder charges = new StringBuilder();
    for (int i = 0; i < FILES.length; i++) {
      script.append('\n').append(resource(FILES[i] + "_reserve.lua"));
      for (Algorithm algorithm : Algorithm.values()) {
        if (file(algorithm) == i) {
          String name = RedisKeys.scriptName(algorithm);
          reserved.append(reserved.isEmpty() ? "" : ", ").append(name).append(" = ").append(FILES[i]).append("_reserved");
          giveBacks.append(giveBacks.isEmpty() ? "" : ", ").append(name).append(" = ").append(FILES[i]).append("_give_back");
          charges.append(charges.isEmpty() ? "" : ", ").append(name).append(" = ").append(FILES[i]).append("_charge");
        }
      }
    }
    return script.append("\n-- Each algorithm's reservation functions, by the name the caller gives.\n")
        .append("local reserved = {").append(reserved).append("}\n")
        .append("local give_backs = {").append(giveBacks).append("}\n")
        .append("local charges = {").append(charges).append("}\n").toString();
  }

  /** The script that checks one policy of {@code algorithm}. */
  String check(Algorithm algorithm) {
    return check.get(algorithm);
  }

  /** The script that checks several policies of one key at once, all or nothing. */
  String checkAll() {
    return checkAll;
  }

  /** The script that runs several single-policy checks one after the other. */
  String checkBatch() {
    return checkBatch;
  }

  /** The prelude, the files in {@code mask}, their registry, the {@code shared} functions, and {@code main}. */
  private String assemble(int mask, String main, String... shared) {
    StringBuilder script = new StringBuilder(prelude);
    StringBuilder algorithms = new StringBuilder();
    StringBuilder states = new StringBuilder();
    for (int i = 0; i < FILES.length; i++) {
      if ((mask & (1 << i)) == 0) {
        continue;
      }
      script.append('\n').append(files[i]);
      for (Algorithm algorithm : Algorithm.values()) {
        if (file(algorithm) == i) {
          String name = RedisKeys.scriptName(algorithm);
          algorithms.append(algorithms.isEmpty() ? "" : ", ").append(name).append(" = ").append(FILES[i]);
          states.append(states.isEmpty() ? "" : ", ").append(name).append(" = ").append(FILES[i]).append("_state");
        }
      }
    }
    script.append("\n-- The algorithms this script may run, by the name the caller gives.\n")
        .append("local algorithms = {").append(algorithms).append("}\n")
        .append("local states = {").append(states).append("}\n");
    for (String functions : shared) {
      script.append('\n').append(functions);
    }
    return script.append('\n').append(resource(main)).toString();
  }

  private static int file(Algorithm algorithm) {
    return switch (algorithm) {
      case FIXED_WINDOW -> 0;
      case SLIDING_LOG -> 1;
      case SLIDING_WINDOW -> 2;
      case TOKEN_BUCKET -> 3;
      case GCRA, LEAKY_BUCKET -> 4;
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

package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Algorithm;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * The assembled scripts hold only the algorithms they may run, and every one of them (each
 * algorithm's, each set of algorithms' checkAll, the batch) is valid Lua that Redis accepts. On a
 * server of its own (it flushes the script cache).
 */
class ScriptsTest {
  private static final long T0 = 1_700_000_000_000_000L;
  private static final List<String> FILES =
      List.of("fixed_window", "sliding_log", "sliding_window", "token_bucket", "gcra");

  private static RedisServer server;
  private final Scripts scripts = new Scripts();

  @BeforeAll
  static void startServer() {
    server = RedisServer.start(); // its own: the test flushes scripts
  }

  @AfterAll
  static void stopServer() {
    server.close();
  }

  @Test
  void aCheckScriptDefinesItsAlgorithmOnly() {
    String gcra = scripts.check(Algorithm.GCRA);
    assertThat(defined(gcra)).containsExactly("gcra");
    assertThat(gcra).contains("local algorithms = {gcra = gcra, leaky_bucket = gcra}\n");
    assertThat(scripts.check(Algorithm.LEAKY_BUCKET)).as("GCRA and LEAKY_BUCKET share one script").isEqualTo(gcra);
    assertThat(defined(scripts.check(Algorithm.SLIDING_LOG))).containsExactly("sliding_log");
    assertThat(scripts.check(Algorithm.FIXED_WINDOW))
        .contains("local algorithms = {fixed_window = fixed_window}\n")
        .contains("local states = {fixed_window = fixed_window_state}\n");
  }

  @Test
  void aCheckAllScriptDefinesTheAlgorithmsOfItsPoliciesOnly() {
    int mask = Scripts.mask(Algorithm.FIXED_WINDOW) | Scripts.mask(Algorithm.LEAKY_BUCKET);
    String all = scripts.checkAll(mask);
    assertThat(defined(all)).containsExactly("fixed_window", "gcra");
    assertThat(all).doesNotContain("local function check_one");
    assertThat(Scripts.mask(Algorithm.GCRA)).isEqualTo(Scripts.mask(Algorithm.LEAKY_BUCKET));
    assertThatThrownBy(() -> scripts.checkAll(0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> scripts.checkAll(Scripts.MASKS)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void theBatchScriptDefinesEveryAlgorithm() {
    assertThat(defined(scripts.checkBatch())).containsExactlyElementsOf(FILES);
  }

  @Test
  void thePublicCheckScriptIsTheOneABackendLoads() {
    RedissonClient client = Clients.single(server.url());
    try {
      server.command("SCRIPT", "FLUSH");
      RedisBackend.builder(client).keyPrefix(Clients.uniquePrefix()).build();
      for (Algorithm algorithm : Algorithm.values()) {
        String text = RedisBackend.checkScript(algorithm);
        assertThat(text).isEqualTo(scripts.check(algorithm));
        assertThat(server.command("SCRIPT", "EXISTS", new RedisBackend.Lua(text).sha())).isEqualTo(List.of(1L));
      }
    } finally {
      client.shutdown();
    }
  }

  @Test
  void redisAcceptsEveryScript() {
    List<String> all = new ArrayList<>();
    for (Algorithm algorithm : Algorithm.values()) {
      all.add(scripts.check(algorithm));
    }
    for (int mask = 1; mask < Scripts.MASKS; mask++) {
      all.add(scripts.checkAll(mask));
    }
    all.add(scripts.checkBatch());
    for (String script : all) {
      Object sha = server.command("SCRIPT", "LOAD", script);
      assertThat(sha).isEqualTo(new RedisBackend.Lua(script).sha());
    }
  }

  @Test
  void aCheckAllOfANewSetOfAlgorithmsIsLoadedOnItsFirstCall() {
    RedissonClient client = Clients.single(server.url());
    try {
      RedisBackend backend = RedisBackend.builder(client).keyPrefix(Clients.uniquePrefix()).build();
      Policy window = Policy.of(2, Duration.ofMinutes(1), Algorithm.FIXED_WINDOW).withName("w");
      Policy bucket = Policy.of(5, Duration.ofMinutes(1), Algorithm.TOKEN_BUCKET).withName("b");
      String sha = new RedisBackend.Lua(scripts.checkAll(
          Scripts.mask(Algorithm.FIXED_WINDOW) | Scripts.mask(Algorithm.TOKEN_BUCKET))).sha();
      server.command("SCRIPT", "FLUSH");
      assertThat(server.command("SCRIPT", "EXISTS", sha)).isEqualTo(List.of(0L));
      List<Boolean> allowed = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        MultiDecision d = backend.checkAll("k", List.of(window, bucket), 1, T0 + i);
        allowed.add(d.allowed());
      }
      assertThat(allowed).containsExactly(true, true, false);
      assertThat(server.command("SCRIPT", "EXISTS", sha)).isEqualTo(List.of(1L));
    } finally {
      client.shutdown();
    }
  }

  /** The algorithm files a script defines, in the order they appear. */
  private static List<String> defined(String script) {
    List<String> names = new ArrayList<>();
    for (String name : FILES) {
      if (script.contains("local function " + name + "(")) {
        names.add(name);
      }
    }
    Set<String> states = Set.copyOf(names);
    for (String name : FILES) {
      assertThat(script.contains("local function " + name + "_state(")).as(name + "_state").isEqualTo(states.contains(name));
    }
    return names;
  }
}

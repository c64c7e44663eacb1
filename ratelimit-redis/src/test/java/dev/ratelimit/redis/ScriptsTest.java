package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import dev.ratelimit.tck.redis.RedisServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * The assembled scripts: a one-policy script holds only its algorithm, the batch and checkAll
 * scripts every one, and Redis compiles each. On a server of its own (it flushes the script cache).
 */
class ScriptsTest {
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
  void theBatchAndCheckAllScriptsDefineEveryAlgorithm() {
    assertThat(defined(scripts.checkBatch())).containsExactlyElementsOf(FILES);
    assertThat(defined(scripts.checkAll())).containsExactlyElementsOf(FILES);
    assertThat(scripts.checkAll()).doesNotContain("local function check_one");
  }

  @Test
  void thePublicCheckScriptIsTheOneABackendLoads() {
    RedissonClient client = Clients.single(server.url());
    try {
      server.command("SCRIPT", "FLUSH");
      RedisBackend.builder(client).keyPrefix(Clients.uniquePrefix()).build();
      for (Algorithm algorithm : Algorithm.values()) {
        String sha = new Lua(RedisBackend.checkScript(algorithm)).sha();
        assertThat(server.command("SCRIPT", "EXISTS", sha)).as(algorithm.name()).isEqualTo(List.of(1L));
      }
    } finally {
      client.shutdown();
    }
  }

  @Test
  void redisCompilesEveryScript() { // running them is the contract tests' job
    List<String> all = new ArrayList<>();
    for (Algorithm algorithm : Algorithm.values()) {
      all.add(scripts.check(algorithm));
    }
    all.add(scripts.checkAll());
    all.add(scripts.checkBatch());
    for (String script : all) {
      Object sha = server.command("SCRIPT", "LOAD", script);
      assertThat(sha).isEqualTo(new Lua(script).sha());
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

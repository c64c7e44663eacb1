package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Algorithm;
import dev.ratelimit.tck.redis.RedisServer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * {@link RedisBackend#warmUp()}: what a readiness check waits for. A backend built lazily (as the
 * Spring Boot starter builds it, so that an application starts while Redis is down) loads its
 * scripts in one call once Redis answers, and fails while it does not.
 */
class RedisWarmUpTest {

  @Test
  void warmUpLoadsEveryCheckScriptAndFailsWhileRedisIsDown() throws Exception {
    try (RedisServer server = RedisServer.start()) {
      RedissonClient client = Clients.single(server.url());
      try {
        RedisBackend backend = RedisBackend.builder(client).keyPrefix(Clients.uniquePrefix())
            .loadScriptsEagerly(false).build();
        assertThat(scriptsLoaded(server)).as("built lazily: nothing loaded yet").containsOnly(0L);

        backend.warmUp();
        assertThat(scriptsLoaded(server)).as("every algorithm's script").containsOnly(1L);
        assertThat(server.command("DBSIZE")).as("no key written").isEqualTo(0L);

        server.stop();
        assertThatThrownBy(backend::warmUp).isInstanceOf(RuntimeException.class);

        server.restart(); // empty: no scripts
        assertThat(scriptsLoaded(server)).containsOnly(0L);
        for (int i = 0; ; i++) { // Redisson reconnects on its own, within a moment
          try {
            backend.warmUp();
            break;
          } catch (RuntimeException e) {
            assertThat(i).as("Redis answered again within 5 s: %s", e).isLessThan(50);
            Thread.sleep(100);
          }
        }
        assertThat(scriptsLoaded(server)).containsOnly(1L);
      } finally {
        client.shutdown();
      }
    }
  }

  /** SCRIPT EXISTS of every algorithm's check script: 1 loaded, 0 not. */
  private static List<Long> scriptsLoaded(RedisServer server) throws Exception {
    List<Object> args = new ArrayList<>(List.of("SCRIPT", "EXISTS"));
    for (Algorithm algorithm : Algorithm.values()) {
      args.add(HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1")
          .digest(RedisBackend.checkScript(algorithm).getBytes(StandardCharsets.UTF_8))));
    }
    List<Long> loaded = new ArrayList<>();
    for (Object o : (List<?>) server.command(args.toArray())) {
      loaded.add((Long) o);
    }
    return loaded;
  }
}

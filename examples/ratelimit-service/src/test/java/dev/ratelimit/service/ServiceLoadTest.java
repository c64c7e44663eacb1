package dev.ratelimit.service;

import static dev.ratelimit.service.Http.json;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.tck.redis.RedisServer;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A bounded load test of the service on loopback, in the {@code load} profile only
 * ({@code ./mvnw -B -Pload -pl examples/ratelimit-service -am verify}): {@value #CLIENTS} clients
 * send checks back to back for {@code -Dload.seconds} (default 20, after {@code -Dload.warmup}
 * seconds of the same traffic on other keys, default 20, and once per JVM {@code -Dload.jvm-warmup}
 * seconds, default 40, on a throwaway instance) over {@value #KEYS} keys, against
 * the in-memory backend and then Redis. It reports requests/s and latency percentiles (printed and
 * appended to {@code target/load-report.md}) and checks exact admission: with a policy of
 * {@value #LIMIT} per day in a sliding log (nothing ages out during the run), each key admits
 * exactly {@code min(sent, LIMIT)}, and the service's own state agrees.
 */
@Tag("load")
@TestMethodOrder(MethodOrderer.MethodName.class)
class ServiceLoadTest {
  static final int CLIENTS = 8;
  static final int KEYS = 20;
  static final int LIMIT = 50;
  static final int SECONDS = Integer.getInteger("load.seconds", 20);
  /** Traffic before measuring: Spring MVC's code takes C2 about half a minute on 2 cores. */
  static final int WARM_UP_SECONDS = Integer.getInteger("load.warmup", 20);

  /**
   * Once per JVM: the service's code (Spring MVC, Tomcat, Jackson) compiled by C2 before either
   * backend is measured, so that the first measured backend is not the one paying for it.
   */
  @BeforeAll
  static void warmTheJvm() throws Exception {
    try (ConfigurableApplicationContext service = ServiceInstances.start(Map.of("LOGGING_LEVEL_ROOT", "WARN"))) {
      warmUp(ServiceInstances.port(service), Integer.getInteger("load.jvm-warmup", 40));
    }
  }

  @Test
  void a_memory() throws Exception {
    run("memory", Map.of());
  }

  @Test
  void b_redis() throws Exception {
    run("redis", Map.of("RATELIMIT_REDIS_URL", RedisServer.shared().url(),
        "RATELIMIT_REDIS_KEY_PREFIX", "load-" + System.nanoTime()));
  }

  private void run(String backend, Map<String, String> extra) throws Exception {
    Map<String, String> env = new HashMap<>(extra);
    env.put("RATELIMIT_POLICIES_LOAD_LIMIT", Integer.toString(LIMIT));
    env.put("RATELIMIT_POLICIES_LOAD_WINDOW", "1d");
    env.put("RATELIMIT_POLICIES_LOAD_ALGORITHM", "SLIDING_LOG");
    env.put("LOGGING_LEVEL_ROOT", "WARN");
    env.put("RATELIMIT_TIMEOUT", "5s"); // a timed-out check could still count in Redis: no timeouts here
    env.put("RATELIMIT_REDIS_TIMEOUT", "5s");
    try (ConfigurableApplicationContext service = ServiceInstances.start(env)) {
      int port = ServiceInstances.port(service);
      String run = Long.toString(System.nanoTime());
      warmUp(port, WARM_UP_SECONDS);

      AtomicLongArray sent = new AtomicLongArray(KEYS);
      AtomicLongArray admitted = new AtomicLongArray(KEYS);
      long[][] latencies = new long[CLIENTS][];
      long[] errors = new long[CLIENTS];
      long deadline = System.nanoTime() + SECONDS * 1_000_000_000L;
      List<Thread> threads = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        int clientIndex = c;
        Thread thread = new Thread(() -> {
          KeepAliveClient client = new KeepAliveClient(port);
          long[] own = new long[1 << 16];
          int n = 0;
          for (int i = clientIndex; System.nanoTime() < deadline; i += CLIENTS) {
            int key = i % KEYS;
            String request = checkBody("load:" + run + ":" + key);
            long started = System.nanoTime();
            try {
              KeepAliveClient.Response response = client.post("/v1/check", request);
              long took = System.nanoTime() - started;
              if ((response.status() != 200 && response.status() != 429)
                  || response.body().contains("\"degraded\":true")) {
                errors[clientIndex]++;
                continue;
              }
              sent.incrementAndGet(key);
              if (response.body().contains("\"allowed\":true")) {
                admitted.incrementAndGet(key);
              }
              if (n == own.length) {
                own = Arrays.copyOf(own, n * 2);
              }
              own[n++] = took;
            } catch (IOException | RuntimeException e) {
              errors[clientIndex]++;
            }
          }
          latencies[clientIndex] = Arrays.copyOf(own, n);
          try {
            client.close();
          } catch (IOException e) {
            // the run is over
          }
        }, "load-client-" + c);
        threads.add(thread);
      }
      long started = System.nanoTime();
      threads.forEach(Thread::start);
      for (Thread thread : threads) {
        thread.join();
      }
      double elapsed = (System.nanoTime() - started) / 1e9;

      long[] all = Arrays.stream(latencies).flatMapToLong(Arrays::stream).sorted().toArray();
      String row = String.format(Locale.ROOT, "| %s | %d | %d | %,d | %,.0f | %.2f | %.2f | %.2f | %,d |",
          backend, CLIENTS, SECONDS, all.length, all.length / elapsed, LoadReport.percentileMillis(all, 0.50), LoadReport.percentileMillis(all, 0.99),
          LoadReport.percentileMillis(all, 0.999), Arrays.stream(errors).sum());
      report(row);

      assertThat(Arrays.stream(errors).sum()).as("failed requests").isZero();
      Http http = new Http(port);
      for (int key = 0; key < KEYS; key++) {
        long expected = Math.min(sent.get(key), LIMIT);
        assertThat(admitted.get(key)).as("admitted for key %d of %d sent", key, sent.get(key)).isEqualTo(expected);
        long remaining = json(http.get("/v1/inspect/load/load:" + run + ":" + key)).get("remaining").asLong();
        assertThat(remaining).as("remaining for key %d", key).isEqualTo(LIMIT - expected);
      }
      long keysPastTheLimit = java.util.stream.IntStream.range(0, KEYS).filter(key -> sent.get(key) > LIMIT).count();
      assertThat(keysPastTheLimit).as("keys driven past their limit (denials were exercised)").isPositive();
    }
  }

  private static String checkBody(String key) {
    return "{\"key\":\"" + key + "\",\"policy\":\"load\"}";
  }

  /** Traffic from every client on other keys, so the JIT and the pools are warm before measuring. */
  private static void warmUp(int port, int seconds) throws Exception {
    long until = System.nanoTime() + seconds * 1_000_000_000L;
    List<Thread> threads = new ArrayList<>();
    for (int c = 0; c < CLIENTS; c++) {
      int offset = c;
      Thread thread = new Thread(() -> {
        try (KeepAliveClient client = new KeepAliveClient(port)) {
          for (int i = offset; System.nanoTime() < until; i += CLIENTS) {
            client.post("/v1/check", "{\"key\":\"warm-up:" + (i % 50) + "\",\"policy\":\"per-user\"}");
          }
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      });
      threads.add(thread);
      thread.start();
    }
    for (Thread thread : threads) {
      thread.join();
    }
  }

  private static void report(String row) throws IOException {
    LoadReport.append("POST /v1/check (HTTP)",
        "| backend | clients | seconds | requests | requests/s | p50 ms | p99 ms | p99.9 ms | errors |\n"
        + "|---|---|---|---|---|---|---|---|---|\n", row);
  }
}

package dev.ratelimit.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;

/**
 * Clients that send their bodies a byte at a time do not take the worker threads (Tomcat's 200):
 * with 260 of them connected, a normal check is answered at once, and the slow ones are answered
 * too when their bodies are complete.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SlowClientTest {
  static final int SLOW_CLIENTS = 260;
  static final int BODY_BYTES = 200;

  @LocalServerPort
  int port;

  @Test
  void slowBodiesLeaveRoomForANormalCheck() throws Exception {
    String run = Long.toString(System.nanoTime());
    List<RawHttp> slow = new ArrayList<>();
    List<byte[]> bodies = new ArrayList<>();
    try {
      for (int i = 0; i < SLOW_CLIENTS; i++) {
        byte[] body = paddedCheck("slow:" + run + ":" + i);
        bodies.add(body);
        RawHttp client = new RawHttp(port, 5_000);
        slow.add(client);
        client.send("POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "Content-Length: " + BODY_BYTES + "\r\n\r\n").send(new byte[] {body[0]});
      }
      // real time is the point: each slow request reaches the application (before the fix, a
      // worker thread each, blocked reading its body) while its client pauses, then sends a byte more
      Thread.sleep(1_000);
      for (int i = 0; i < SLOW_CLIENTS; i++) {
        slow.get(i).send(new byte[] {bodies.get(i)[1]});
      }

      HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
      HttpResponse<String> normal = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/check"))
          .timeout(Duration.ofSeconds(1)) // generous for one check; before the fix it waited for a worker for a minute
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"key\":\"normal:" + run + "\",\"policy\":\"login\"}"))
          .build(), HttpResponse.BodyHandlers.ofString());
      assertThat(normal.statusCode()).isEqualTo(200);
      JsonNode decision = Http.json(normal);
      assertThat(decision.get("allowed").asBoolean()).isTrue();
      assertThat(decision.get("remaining").asLong()).isEqualTo(4);

      for (int i = 0; i < 3; i++) { // the slow ones were kept, not dropped: completed, they are answered
        byte[] body = bodies.get(i);
        RawHttp.Response answer = slow.get(i).send(java.util.Arrays.copyOfRange(body, 2, body.length)).response();
        assertThat(answer.status()).isEqualTo(200);
        assertThat(answer.json().get("remaining").asLong()).isEqualTo(99);
      }
    } finally {
      slow.forEach(RawHttp::close);
    }
  }

  /** A check of {@code key} under per-user, padded with spaces to exactly {@value #BODY_BYTES} bytes. */
  static byte[] paddedCheck(String key) {
    String json = "{\"key\":\"" + key + "\",\"policy\":\"per-user\"}";
    return (json + " ".repeat(BODY_BYTES - json.length())).getBytes(StandardCharsets.UTF_8);
  }
}

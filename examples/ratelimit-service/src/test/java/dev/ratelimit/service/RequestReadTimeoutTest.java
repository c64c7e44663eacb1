package dev.ratelimit.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * A request must arrive whole, headers and body, within {@code ratelimit-service.request-read-timeout}
 * of its first byte (1 s here); a slower one is a 408 problem and its connection is closed, without
 * a worker thread waiting for the rest of it. Real time is the point of these tests.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = "ratelimit-service.request-read-timeout=1s")
class RequestReadTimeoutTest {
  static final String HEAD = "POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      + "Content-Length: " + SlowClientTest.BODY_BYTES + "\r\n\r\n";

  @LocalServerPort
  int port;

  @Test
  void aBodyStillArrivingAtTheDeadlineIs408() {
    try (RawHttp client = new RawHttp(port, 10_000)) {
      byte[] body = SlowClientTest.paddedCheck("late:" + System.nanoTime());
      RawHttp.Response response = client.send(HEAD).send(Arrays.copyOf(body, 10)).response();
      assertTimedOut(response);
    }
  }

  @Test
  void headersArrivingOverTheDeadlineAre408() throws InterruptedException {
    try (RawHttp client = new RawHttp(port, 10_000)) {
      client.send(HEAD.substring(0, 20));
      Thread.sleep(1_500);
      RawHttp.Response response = client.send(HEAD.substring(20))
          .send(SlowClientTest.paddedCheck("late-head:" + System.nanoTime())).response();
      assertTimedOut(response);
    }
  }

  @Test
  void slowClientsPastTheDeadlineHoldNoWorkers() throws Exception {
    List<RawHttp> slow = new ArrayList<>();
    try {
      for (int i = 0; i < SlowClientTest.SLOW_CLIENTS; i++) {
        slow.add(new RawHttp(port, 10_000).send(HEAD).send("{"));
      }
      for (RawHttp client : slow) { // each is answered at its deadline, and Tomcat reads no more of it
        assertTimedOut(client.response());
      }
      HttpResponse<String> normal = HttpClient.newHttpClient().send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/check")).timeout(Duration.ofSeconds(1))
              .header("Content-Type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofString("{\"key\":\"after:" + System.nanoTime() + "\",\"policy\":\"login\"}"))
              .build(), HttpResponse.BodyHandlers.ofString());
      assertThat(normal.statusCode()).isEqualTo(200);
      assertThat(Http.json(normal).get("remaining").asLong()).isEqualTo(4);
    } finally {
      slow.forEach(RawHttp::close);
    }
  }

  private static void assertTimedOut(RawHttp.Response response) {
    assertThat(response.status()).isEqualTo(408);
    assertThat(response.header("Content-Type")).isEqualTo("application/problem+json");
    assertThat(response.header("Connection")).isEqualTo("close");
    assertThat(response.json().get("status").asInt()).isEqualTo(408);
    assertThat(response.json().get("detail").asString())
        .contains("did not arrive whole within 1000 ms (ratelimit-service.request-read-timeout)");
  }
}

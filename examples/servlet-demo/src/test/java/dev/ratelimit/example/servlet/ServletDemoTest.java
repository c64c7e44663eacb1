package dev.ratelimit.example.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo in-process on a free port, over real HTTP, with its own {@code ratelimit.properties}.
 * The limiter runs on the system clock, so waits are asserted within the second they round to.
 * Each test starts its own server, hence its own limiter.
 */
class ServletDemoTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

  private Server server;

  @AfterEach
  void stop() throws Exception {
    if (server != null) {
      server.stop();
    }
  }

  @Test
  void theApiAllowsFiveAMinutePerKeyThenAnswers429() throws Exception {
    server = ServletDemo.start(0, ServletDemo.DEFAULT_CONFIG);
    for (int i = 1; i <= 5; i++) {
      HttpResponse<String> ok = send("GET", "/api/hello", "X-Api-Key", "key-1");
      assertThat(ok.statusCode()).isEqualTo(200);
      assertThat(ok.body()).isEqualTo("hello\n");
      assertThat(ok.headers().firstValue("RateLimit-Policy")).hasValue("\"per-client\";q=5;w=60");
      // GCRA, 5 a minute: r is what remains; t, when the key is fresh again, grows by 12 s a request
      // (less the time these requests took, rounded up)
      String expected = "\"per-client\";r=" + (5 - i) + ";t=(" + 12 * i + "|" + (12 * i - 1) + ")";
      assertThat(ok.headers().firstValue("RateLimit")).hasValueSatisfying(v -> assertThat(v).matches(expected));
    }

    HttpResponse<String> denied = send("GET", "/api/hello", "X-Api-Key", "key-1");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(seconds(denied, "Retry-After")).as("one request every 12 s").isBetween(11L, 12L);
    assertThat(denied.headers().firstValue("Cache-Control")).hasValue("no-store");
    assertThat(denied.headers().firstValue("RateLimit-Policy")).hasValue("\"per-client\";q=5;w=60");
    assertThat(denied.headers().firstValue("RateLimit")).as("t, on a denial, is the wait")
        .hasValue("\"per-client\";r=0;t=" + seconds(denied, "Retry-After"));
    assertThat(denied.headers().firstValue("Content-Type")).hasValueSatisfying(
        v -> assertThat(v).startsWith("application/problem+json"));
    assertThat(denied.body())
        .contains("\"type\":\"" + QUOTA_EXCEEDED + "\"")
        .contains("\"status\":429")
        .contains("\"violated-policies\":[\"per-client\"]");

    assertThat(send("GET", "/api/hello", "X-Api-Key", "key-2").statusCode()).as("another API key").isEqualTo(200);
    HttpResponse<String> noKey = send("GET", "/api/hello");
    assertThat(noKey.statusCode()).as("no API key: limited per client IP").isEqualTo(200);
    assertThat(noKey.headers().firstValue("RateLimit")).hasValueSatisfying(
        v -> assertThat(v).startsWith("\"per-client\";r=4;"));
  }

  @Test
  void loginsAreLimitedPerClientIpAndAForgedHeaderChangesNothing() throws Exception {
    server = ServletDemo.start(0, ServletDemo.DEFAULT_CONFIG);
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> ok = send("POST", "/login", "X-Forwarded-For", "198.51.100." + i);
      assertThat(ok.statusCode()).isEqualTo(200);
      assertThat(ok.body()).isEqualTo("welcome\n");
    }
    // 127.0.0.1 is no trusted proxy here: X-Forwarded-For is ignored, all four came from one client
    HttpResponse<String> denied = send("POST", "/login", "X-Forwarded-For", "198.51.100.99");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(seconds(denied, "Retry-After")).as("the oldest attempt leaves the 5-minute log").isBetween(290L, 300L);
    assertThat(denied.body()).contains("\"violated-policies\":[\"login-per-ip\"]");

    assertThat(send("GET", "/login").statusCode()).as("the rule is for POST only: GET reaches the servlet")
        .isEqualTo(405);
    HttpResponse<String> home = send("GET", "/");
    assertThat(home.statusCode()).isEqualTo(200);
    assertThat(home.headers().firstValue("RateLimit")).as("no rule for /").isEmpty();
  }

  @Test
  void behindATrustedProxyEachForwardedClientHasItsOwnLimit() throws Exception {
    server = ServletDemo.start(0, "classpath:ratelimit-behind-proxy.properties");
    for (int i = 0; i < 3; i++) {
      assertThat(send("POST", "/login", "X-Forwarded-For", "203.0.113.7").statusCode()).isEqualTo(200);
    }
    assertThat(send("POST", "/login", "X-Forwarded-For", "203.0.113.7").statusCode()).isEqualTo(429);
    assertThat(send("POST", "/login", "X-Forwarded-For", "203.0.113.8").statusCode()).isEqualTo(200);
    assertThat(send("POST", "/login", "Forwarded", "for=203.0.113.9").statusCode()).isEqualTo(200);
    assertThat(send("POST", "/login", "X-Forwarded-For", "203.0.113.7, 127.0.0.1").statusCode())
        .as("trusted hops are skipped, right to left").isEqualTo(429);
    assertThat(send("POST", "/login").statusCode()).as("the proxy itself is a client too").isEqualTo(200);
  }

  @Test
  void aBadConfigurationStopsTheStartNamingTheProperty(@TempDir Path dir) throws IOException {
    Path file = Files.writeString(dir.resolve("typo.properties"), """
        ratelimit.rules[0].name=api
        ratelimit.rules[0].paths=/api/**
        ratelimit.rules[0].policies[0].limit=5/1m
        ratelimit.rules[0].policies[0].algoritm=GCRA
        """);
    assertThatThrownBy(() -> ServletDemo.start(0, file.toString()))
        .hasStackTraceContaining("ratelimit.rules[0].policies[0].algoritm: unknown property");
  }

  private HttpResponse<String> send(String method, String path, String... headers) throws Exception {
    int port = ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .method(method, HttpRequest.BodyPublishers.noBody());
    for (int i = 0; i < headers.length; i += 2) {
      request.header(headers[i], headers[i + 1]);
    }
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static long seconds(HttpResponse<String> response, String header) {
    return Long.parseLong(response.headers().firstValue(header).orElseThrow());
  }
}

package dev.ratelimit.service;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * Errors that Tomcat answers itself, before or outside the API, are problem+json with a detail a
 * client can act on, as the API's own are: malformed requests (sent as raw bytes), TRACE, /error.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ContainerErrorsTest {
  @LocalServerPort
  int port;

  @Test
  void aContentLengthThatIsNotANumber() {
    RawHttp.Response response = RawHttp.exchange(port, "POST /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + "Content-Type: application/json\r\nContent-Length: twelve\r\n\r\n{\"key\":\"k\"}");
    assertProblem(response, 400, "not valid HTTP/1.1", "a numeric Content-Length");
  }

  @Test
  void aNulInAHeader() {
    RawHttp.Response response = RawHttp.exchange(port, "GET /v1/policies HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + "X-Tenant: a\u0000b\r\n\r\n");
    assertProblem(response, 400, "not valid HTTP/1.1", "no control characters such as NUL");
  }

  @Test
  void aBadPercentEncodingInThePath() {
    RawHttp.Response response = RawHttp.exchange(port, "GET /v1/inspect/login/a%zz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    assertProblem(response, 400, "not valid HTTP/1.1", "percent-encoding (UTF-8, encodeURIComponent)");
  }

  @Test
  void aRequestLineOverTheLimitPointsToTheBodyForms() {
    RawHttp.Response response = RawHttp.exchange(port, "GET /v1/inspect/login/" + "k".repeat(9000)
        + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    assertProblem(response, 400, "too large", "POST /v1/inspect, POST /v1/reset");
  }

  @Test
  void traceIsRefusedWithoutEchoingTheRequest() {
    RawHttp.Response response = RawHttp.exchange(port, "TRACE /v1/check HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + "X-Secret: do-not-echo\r\n\r\n");
    assertProblem(response, 405, "TRACE is not allowed here", "allowed: ");
    assertThat(response.header("Allow")).contains("POST").doesNotContain("TRACE");
    assertThat(response.body()).doesNotContain("do-not-echo");
  }

  @Test
  void errorRequestedDirectlyIsNotFound() {
    RawHttp.Response response = RawHttp.exchange(port, "GET /error HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    assertProblem(response, 404, "no such resource", "/v1/openapi.yaml");
  }

  private static void assertProblem(RawHttp.Response response, int status, String... detail) {
    assertThat(response.status()).isEqualTo(status);
    assertThat(response.header("Content-Type")).isEqualTo("application/problem+json");
    assertThat(response.json().get("status").asInt()).isEqualTo(status);
    assertThat(response.json().get("detail").asString()).contains(detail).doesNotContain("java.", "Exception");
  }
}

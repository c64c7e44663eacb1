package dev.ratelimit.example.boot;

import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathMatching;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.stubbing.ServeEvent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The WAIT-mode {@link QuoteClient} against a partner API played by WireMock. Real time is the
 * point (the aspect waits on the real clock), so the assertions are on when WireMock received the
 * calls, with bounds generous enough for a loaded machine: without the limit the calls of a burst
 * arrive within milliseconds of each other.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class OutboundQuoteClientTest {
  private static final WireMockServer PARTNER = new WireMockServer(options().dynamicPort());
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  /** partner-api in application.yml: 2 a second, burst 1. */
  private static final long SPACING_MS = 500;

  static {
    PARTNER.start();
    PARTNER.stubFor(get(urlPathMatching("/quotes/.*")).willReturn(okJson("{\"symbol\":\"ACME\",\"price\":12.5}")));
  }

  @DynamicPropertySource
  static void partner(DynamicPropertyRegistry registry) {
    registry.add("demo.partner.base-url", PARTNER::baseUrl);
  }

  @AfterAll
  static void stopPartner() {
    PARTNER.stop();
  }

  @LocalServerPort
  int port;

  @Test
  void aBurstOfRequestsReachesThePartnerSpacedByThePolicy() {
    long started = System.currentTimeMillis();
    assertThat(quote().join().body()).as("one call to warm up the connection")
        .isEqualTo("{\"symbol\":\"ACME\",\"price\":12.5}");

    List<CompletableFuture<HttpResponse<String>>> burst = IntStream.range(0, 4).mapToObj(i -> quote()).toList();
    for (CompletableFuture<HttpResponse<String>> response : burst) {
      assertThat(response.join().statusCode()).as("every caller waits for its turn, none is refused").isEqualTo(200);
      assertThat(response.join().headers().map()).as("the partner's limit is not the caller's: no limit headers")
          .doesNotContainKeys("ratelimit-policy", "ratelimit", "x-ratelimit-limit");
    }

    List<Long> received = PARTNER.getAllServeEvents().stream()
        .map(ServeEvent::getRequest)
        .map(request -> request.getLoggedDate().getTime())
        .sorted()
        .toList();
    assertThat(received).hasSize(5);
    // the warm-up was admitted after `started`, and call k of the burst at least k spacings after
    // it: a lower bound that a slow machine cannot break (slowness only delays calls)
    for (int k = 1; k < received.size(); k++) {
      assertThat(received.get(k) - started).as("burst call %d arrived (ms after start)", k)
          .isGreaterThanOrEqualTo(k * SPACING_MS - 5);
    }
  }

  private CompletableFuture<HttpResponse<String>> quote() {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/quotes/ACME")).build();
    return HTTP.sendAsync(request, HttpResponse.BodyHandlers.ofString());
  }
}

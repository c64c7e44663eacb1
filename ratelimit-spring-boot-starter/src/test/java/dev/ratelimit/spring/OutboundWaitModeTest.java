package dev.ratelimit.spring;

import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.ok;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathMatching;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.stubbing.ServeEvent;
import dev.ratelimit.Algorithm;
import dev.ratelimit.annotation.RateLimitExceededException;
import dev.ratelimit.annotation.RateLimited;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Outbound limiting: a WAIT-mode client of a third-party API keeps its calls under the policy.
 * Real time is the point here; the assertions are on what WireMock received and when.
 */
class OutboundWaitModeTest {
  private WireMockServer partner;

  @BeforeEach
  void startPartner() {
    partner = new WireMockServer(options().dynamicPort());
    partner.start();
    partner.stubFor(get(urlPathMatching("/quote/.*")).willReturn(ok("42")));
  }

  @AfterEach
  void stopPartner() {
    partner.stop();
  }

  /** 5 calls a second with no burst: consecutive calls at least 200 ms apart. */
  public static class PartnerClient {
    private final HttpClient http = HttpClient.newHttpClient();
    private final String base;

    PartnerClient(String base) {
      this.base = base;
    }

    @RateLimited(key = "'partner-api'", limit = 5, window = "1s", burst = 1, mode = RateLimited.Mode.WAIT,
        maxWait = "10s")
    public String quote(int id) throws Exception {
      return http.send(HttpRequest.newBuilder(URI.create(base + "/quote/" + id)).build(),
          HttpResponse.BodyHandlers.ofString()).body();
    }

    @RateLimited(key = "'shaped'", limit = 4, window = "1s", burst = 3, algorithm = Algorithm.LEAKY_BUCKET,
        mode = RateLimited.Mode.WAIT, maxWait = "10s", name = "shaped")
    public String shaped(int id) throws Exception {
      return quote0(id);
    }

    @RateLimited(key = "'impatient'", limit = 1, window = "1m", mode = RateLimited.Mode.WAIT, maxWait = "100ms",
        name = "impatient")
    public String impatient(int id) throws Exception {
      return quote0(id);
    }

    /** Two keys: the first passes at once, the second makes each call after the first wait (10 a second). */
    @RateLimited(key = "'roomy'", limit = 100, window = "1m", mode = RateLimited.Mode.WAIT, name = "roomy")
    @RateLimited(key = "'tight'", limit = 1, window = "100ms", mode = RateLimited.Mode.WAIT, maxWait = "5s",
        name = "tight")
    public String twoKeys(int id) {
      return "ok " + id;
    }

    private String quote0(int id) throws Exception {
      return http.send(HttpRequest.newBuilder(URI.create(base + "/quote/" + id)).build(),
          HttpResponse.BodyHandlers.ofString()).body();
    }
  }

  private ApplicationContextRunner runner() {
    String base = partner.baseUrl();
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, AopAutoConfiguration.class))
        .withBean(PartnerClient.class, () -> new PartnerClient(base));
  }

  @Test
  void waitModeSpacesCallsToThePartner() {
    runner().run(context -> {
      PartnerClient client = context.getBean(PartnerClient.class);
      ExecutorService pool = Executors.newFixedThreadPool(3);
      long started = System.currentTimeMillis();
      try {
        List<Future<String>> calls = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
          int id = i;
          calls.add(pool.submit(() -> client.quote(id)));
        }
        for (Future<String> call : calls) {
          assertThat(call.get(20, TimeUnit.SECONDS)).isEqualTo("42");
        }
      } finally {
        pool.shutdownNow();
      }
      List<Long> times = receivedTimes("/quote/");
      assertThat(times).hasSize(6);
      for (int i = 1; i < times.size(); i++) {
        // call i is admitted no earlier than i spacings after the first, which is no earlier than
        // the start: a lower bound that a slow machine cannot break (it only delays calls)
        assertThat(times.get(i) - started).as("call %d arrived (ms after start)", i).isGreaterThanOrEqualTo(i * 200L - 5);
      }
    });
  }

  @Test
  void aWaitingCallWithTwoKeysChargesTheKeyThatPassedOnce() {
    runner().run(context -> {
      PartnerClient client = context.getBean(PartnerClient.class);
      long started = System.nanoTime();
      for (int i = 0; i < 4; i++) { // the 2nd to 4th wait for 'tight', each trying again after its retryAfter
        assertThat(client.twoKeys(i)).isEqualTo("ok " + i);
      }
      assertThat(System.nanoTime() - started).as("three calls waited for 'tight' (a lower bound)")
          .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(290));
      dev.ratelimit.Policy roomy = dev.ratelimit.Policy.of(100, java.time.Duration.ofMinutes(1)).withName("roomy");
      assertThat(context.getBean(dev.ratelimit.RateLimiter.class).inspect("roomy", roomy).remaining())
          .as("one unit of 'roomy' per call, however often 'tight' was tried").isEqualTo(96);
    });
  }

  @Test
  void aLeakyBucketAdmitsAQueueAndReleasesItEvenly() {
    runner().run(context -> {
      PartnerClient client = context.getBean(PartnerClient.class);
      ExecutorService pool = Executors.newFixedThreadPool(3);
      long started = System.currentTimeMillis();
      try {
        List<Future<String>> calls = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
          int id = i;
          calls.add(pool.submit(() -> client.shaped(id)));
        }
        for (Future<String> call : calls) {
          assertThat(call.get(20, TimeUnit.SECONDS)).isEqualTo("42");
        }
      } finally {
        pool.shutdownNow();
      }
      List<Long> times = receivedTimes("/quote/");
      assertThat(times).hasSize(3);
      for (int i = 1; i < times.size(); i++) {
        // call i is admitted no earlier than i spacings after the first, which is no earlier than
        // the start: a lower bound that a slow machine cannot break (it only delays calls)
        assertThat(times.get(i) - started).as("call %d arrived (ms after start)", i).isGreaterThanOrEqualTo(i * 250L - 5);
      }
    });
  }

  @Test
  void waitModeGivesUpAfterMaxWait() {
    runner().run(context -> {
      PartnerClient client = context.getBean(PartnerClient.class);
      assertThat(client.impatient(1)).isEqualTo("42");
      assertThatThrownBy(() -> client.impatient(2)).isInstanceOf(RateLimitExceededException.class);
      assertThat(receivedTimes("/quote/")).hasSize(1);
    });
  }

  private List<Long> receivedTimes(String pathPrefix) {
    return partner.getAllServeEvents().stream()
        .map(ServeEvent::getRequest)
        .filter(r -> r.getUrl().startsWith(pathPrefix))
        .map(r -> r.getLoggedDate().getTime())
        .sorted()
        .toList();
  }
}

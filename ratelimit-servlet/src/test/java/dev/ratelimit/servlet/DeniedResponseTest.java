package dev.ratelimit.servlet;

import dev.ratelimit.http.DeniedResponse;
import dev.ratelimit.http.HeaderOptions;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Decision;
import dev.ratelimit.Policy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The 429 as configuration: rendering, escaping per content type, and what a builder refuses. */
class DeniedResponseTest {
  private static final Policy ODD = Policy.of(5, Duration.ofMinutes(1)).withName("a\"b\\c <i>&'x'");
  private static final Policy OTHER = Policy.of(100, Duration.ofHours(1)).withName("hourly");

  private static List<Decision> denials() {
    return List.of(new Decision(ODD, false, 0, Duration.ofMillis(11_200), Duration.ofSeconds(60), Duration.ZERO),
        new Decision(OTHER, true, 40, Duration.ZERO, Duration.ofSeconds(2000), Duration.ZERO));
  }

  private static Stubs.Response write(DeniedResponse denied) throws Exception {
    Stubs.Response response = new Stubs.Response();
    RateLimitResponses.writeDenied(null, response.proxy, denials(), HeaderOptions.DEFAULT, denied);
    return response;
  }

  private static String body(Stubs.Response response) {
    return response.body.toString(StandardCharsets.UTF_8);
  }

  @Test
  void theDefaultIsTheProblemJson429() throws Exception {
    Stubs.Response response = write(DeniedResponse.PROBLEM_JSON);
    assertThat(response.status).isEqualTo(429);
    assertThat(response.headers).containsEntry("Content-Type", "application/problem+json")
        .containsEntry("Retry-After", "12").containsEntry("Cache-Control", "no-store");
    assertThat(Json.object(body(response))).containsEntry("status", 429L)
        .containsEntry("violated-policies", List.of(ODD.name()));
    assertThat(DeniedResponse.builder().build().toString()).isEqualTo(DeniedResponse.PROBLEM_JSON.toString());
  }

  @Test
  void aJsonTemplateGetsItsValuesJsonEscaped() throws Exception {
    DeniedResponse denied = DeniedResponse.builder().status(503).contentType("application/json")
        .body("{\"error\":\"rate_limited\",\"status\":{{status}},\"policy\":\"{{policy}}\","
            + "\"policies\":\"{{policies}}\",\"retry_in\":{{retry-after}},\"limit\":{{limit}}}")
        .header("X-Error-Code", "RL-1").build();
    Stubs.Response response = write(denied);
    assertThat(response.status).isEqualTo(503);
    assertThat(response.headers).containsEntry("Content-Type", "application/json")
        .containsEntry("X-Error-Code", "RL-1").containsEntry("Retry-After", "12")
        .containsEntry("RateLimit", "\"a\\\"b\\\\c <i>&'x'\";r=0;t=12, \"hourly\";r=40;t=12");
    assertThat(Json.object(body(response))).containsEntry("error", "rate_limited").containsEntry("status", 503L)
        .containsEntry("policy", ODD.name()).containsEntry("policies", ODD.name())
        .containsEntry("retry_in", 12L).containsEntry("limit", 5L);
  }

  @Test
  void markupAndPlainTextTemplates() throws Exception {
    Stubs.Response html = write(DeniedResponse.builder().contentType("text/html")
        .body("<p>Too many requests ({{policy}}); retry in {{retry-after}} s.</p>").build());
    assertThat(body(html)).isEqualTo("<p>Too many requests (a&quot;b\\c &lt;i&gt;&amp;&#39;x&#39;); retry in 12 s.</p>");
    assertThat(html.headers).containsEntry("Content-Type", "text/html;charset=UTF-8");

    Stubs.Response text = write(DeniedResponse.builder().contentType("text/plain; charset=utf-8")
        .body("slow down: {{policy}}, {{retry-after}}s, {{status}}").build());
    assertThat(body(text)).isEqualTo("slow down: " + ODD.name() + ", 12s, 429");
    assertThat(text.headers).containsEntry("Content-Type", "text/plain; charset=utf-8");
  }

  @Test
  void withoutABodyTheProblemGoesInTheGivenTypeWithTheGivenStatus() throws Exception {
    Stubs.Response response = write(DeniedResponse.builder().status(503).contentType("application/json").build());
    assertThat(response.status).isEqualTo(503);
    assertThat(response.headers).containsEntry("Content-Type", "application/json");
    assertThat(Json.object(body(response))).containsEntry("status", 503L)
        .containsEntry("type", "https://iana.org/assignments/http-problem-types#quota-exceeded");

    Stubs.Response empty = write(DeniedResponse.builder().body("").header("Cache-Control", "private, no-store").build());
    assertThat(body(empty)).isEmpty();
    assertThat(empty.headers).doesNotContainKey("Content-Type").containsEntry("Cache-Control", "private, no-store");
  }

  @Test
  void aResponseOverAnotherKeepsWhatItDoesNotChange() {
    DeniedResponse global = DeniedResponse.builder().contentType("application/json").body("{\"p\":\"{{policy}}\"}")
        .header("X-A", "1").header("X-B", "2").build();
    DeniedResponse rule = DeniedResponse.builder(global).status(503).header("x-b", "3").build();
    assertThat(rule.status()).isEqualTo(503);
    assertThat(rule.contentType()).isEqualTo("application/json");
    assertThat(rule.body()).isEqualTo("{\"p\":\"{{policy}}\"}");
    assertThat(rule.headers()).containsExactly(java.util.Map.entry("X-A", "1"), java.util.Map.entry("x-b", "3"));
    assertThat(global.status()).isEqualTo(429);
  }

  @ParameterizedTest
  @ValueSource(ints = {200, 302, 399, 600, 0})
  void theStatusIsA4xxOr5xx(int status) {
    assertThatThrownBy(() -> DeniedResponse.builder().status(status))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("status " + status + " is not a 4xx or 5xx status");
  }

  @Test
  void whatABuilderRefuses() {
    assertThatThrownBy(() -> DeniedResponse.builder().body("{\"p\":\"{{polcy}}\"}"))
        .hasMessageContaining("unknown placeholder '{{polcy}}'")
        .hasMessageContaining("{{status}}, {{policy}}, {{policies}}, {{retry-after}}, {{limit}}");
    assertThatThrownBy(() -> DeniedResponse.builder().body("retry in {{retry-after"))
        .hasMessageContaining("unknown placeholder '{{retry-after'");
    assertThatThrownBy(() -> DeniedResponse.builder().body("{{ policy }}"))
        .hasMessageContaining("unknown placeholder '{{ policy }}'");
    assertThatThrownBy(() -> DeniedResponse.builder().body("slow down").build())
        .hasMessageContaining("a body needs a content type");
    assertThatThrownBy(() -> DeniedResponse.builder().contentType("json"))
        .hasMessageContaining("content type 'json' is not a media type");
    assertThatThrownBy(() -> DeniedResponse.builder().contentType("text/plain\r\nX-Evil: 1"))
        .hasMessageContaining("is not a media type");
    for (String written : List.of("Retry-After", "ratelimit", "RateLimit-Policy", "X-RateLimit-Remaining",
        "Content-Type", "content-length")) {
      assertThatThrownBy(() -> DeniedResponse.builder().header(written, "1"))
          .hasMessageContaining("header '" + written + "' is written by the limiter itself");
    }
    assertThatThrownBy(() -> DeniedResponse.builder().header("X A", "1")).hasMessageContaining("'X A' is not a header name");
    assertThatThrownBy(() -> DeniedResponse.builder().header("X-A", "1\r\nX-Evil: 2"))
        .hasMessageContaining("must be printable ASCII");
    assertThatThrownBy(() -> DeniedResponse.builder().header("X-A", "café")).hasMessageContaining("must be printable ASCII");
  }
}

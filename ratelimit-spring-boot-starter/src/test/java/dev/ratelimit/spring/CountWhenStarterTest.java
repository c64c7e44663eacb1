package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.tck.docs.DocPage;
import dev.ratelimit.tck.http.StructuredFields;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;

/**
 * {@code @RateLimited(countWhen = ...)} in a real Tomcat: the login controller of README.md and
 * docs/spring-boot.md, whose code is {@code CountWhenPageExamples.java}.
 */
class CountWhenStarterTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static ConfigurableApplicationContext app;

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(LoginController.class)
  static class App {}

  @BeforeAll
  static void start() {
    app = new SpringApplicationBuilder(App.class).properties("server.port=0", "ratelimit.backend=memory").run();
  }

  @AfterAll
  static void stop() {
    app.close();
  }

  private static HttpResponse<String> login(String password) throws Exception {
    int port = ((WebServerApplicationContext) app).getWebServer().getPort();
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/login?user=ann&password="
        + password)).POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void thePagesShowTheCodeThisTestRuns() {
    for (String name : List.of("docs/spring-boot.md")) {
      DocPage page = DocPage.read(name);
      page.assertRunBy(page.block("java", "class LoginController"),
          "src/test/java/dev/ratelimit/spring/CountWhenPageExamples.java");
    }
  }

  @Test
  void fiveFailedLoginsLockTheClientOutSuccessfulOnesNeverCount() throws Exception {
    for (int i = 0; i < 10; i++) {
      HttpResponse<String> ok = login("right");
      assertThat(ok.statusCode()).isEqualTo(200);
      assertThat(ok.body()).isEqualTo("welcome ann");
      assertThat(StructuredFields.parseList(ok.headers().firstValue("RateLimit").orElseThrow()).get(0).integer("r"))
          .as("the room left while the call held its unit; successes give it back").isEqualTo(4);
    }
    for (int i = 0; i < 5; i++) {
      assertThat(login("wrong").statusCode()).isEqualTo(401);
    }
    HttpResponse<String> locked = login("right");
    assertThat(locked.statusCode()).as("refused before it runs, the right password too").isEqualTo(429);
    assertThat(locked.headers().firstValue("Retry-After")).as("GCRA: one failure's worth, 3 minutes").hasValue("180");
    assertThat(locked.body()).contains("\"violated-policies\":[\"failed-logins\"]");
  }
}

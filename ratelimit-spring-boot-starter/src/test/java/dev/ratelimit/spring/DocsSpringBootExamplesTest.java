package dev.ratelimit.spring;

import static dev.ratelimit.spring.ActuatorApp.get;
import static dev.ratelimit.spring.ActuatorApp.send;
import static dev.ratelimit.spring.ActuatorApp.start;
import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import dev.ratelimit.Policy;
import dev.ratelimit.tck.docs.DocPage;
import java.io.IOException;
import java.io.StringReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The configuration and code of docs/operations.md, run as written there: its properties (the
 * endpoint exposed with writes allowed, denial logs on) configure an application over real HTTP,
 * and its policy update runs on that application's registry.
 */
class DocsSpringBootExamplesTest {
  private static final String PAGE = "docs/operations.md";
  private static final String SOURCE = "src/test/java/dev/ratelimit/spring/DocsSpringBootExamplesTest.java";

  /** Every line of the page's properties blocks, as {@code name=value}. */
  private static String[] pageProperties() throws IOException {
    List<String> all = new ArrayList<>();
    for (String block : DocPage.read(PAGE).blocks("properties")) {
      Properties properties = new Properties();
      properties.load(new StringReader(block));
      properties.stringPropertyNames().stream().sorted().forEach(n -> all.add(n + "=" + properties.getProperty(n)));
    }
    return all.toArray(String[]::new);
  }

  @Test
  void thePageShowsTheCodeThisTestRuns() {
    DocPage page = DocPage.read(PAGE);
    page.assertRunBy(page.block("java", "policies.update"), SOURCE);
  }

  @Test
  void thePagesPropertiesExposeTheEndpointAllowWritesAndLogDenials() throws Exception {
    assertThat(pageProperties()).contains("management.endpoints.web.exposure.include=health,ratelimits",
        "management.endpoint.ratelimits.access=unrestricted", "ratelimit.log-denials=true");
    Logger logger = Logger.getLogger(DenialLog.LOGGER);
    List<String> lines = new CopyOnWriteArrayList<>();
    Handler capture = new Handler() {
      @Override
      public void publish(LogRecord record) {
        lines.add(record.getMessage());
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    logger.addHandler(capture);
    try (ConfigurableApplicationContext app = start(pageProperties())) {
      for (int i = 0; i < 4; i++) { // api: 3 a minute
        get(app, "/limited/bob");
      }
      assertThat(lines).containsExactly("rate limit denied: source=" + ActuatorApp.Limited.class.getName()
          + ".limited policy=api outcome=denied retryAfterMs=40000");

      assertThat(get(app, "/actuator/health").statusCode()).isEqualTo(200);
      assertThat(get(app, "/actuator/ratelimits").statusCode()).as("exposed").isEqualTo(200);
      assertThat(send(app, "DELETE", "/actuator/ratelimits/api/bob", null).statusCode()).as("writes allowed")
          .isEqualTo(204);

      PolicyRegistry policies = app.getBean(PolicyRegistry.class);
      policies.update("api", Policy.of(200, Duration.ofMinutes(1)));     // a derived name becomes "api"; another explicit name is refused
      Integer limit = JsonPath.read(get(app, "/actuator/ratelimits/api").body(), "$.limit");
      assertThat(limit).isEqualTo(200);
    } finally {
      logger.removeHandler(capture);
    }
  }
}

package dev.ratelimit.spring;

import static dev.ratelimit.spring.ActuatorApp.get;
import static dev.ratelimit.spring.ActuatorApp.start;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A real server with Actuator: the meters in Boot's own registry count filter and annotation
 * decisions exactly, and the filter's denials are logged without the key.
 */
class WebMetricsAndLogsTest {

  private static double decisions(MeterRegistry registry, String policy, String outcome) {
    Counter counter = registry.find(RateLimitMetrics.DECISIONS).tag("policy", policy).tag("outcome", outcome).counter();
    return counter == null ? 0 : counter.count();
  }

  @Test
  void filterAndAnnotationDecisionsAreCountedInBootsRegistry() throws Exception {
    try (ConfigurableApplicationContext app = start()) {
      int filterAllowed = 0;
      int filterDenied = 0;
      for (int i = 0; i < 7; i++) {
        int status = get(app, "/open/" + i).statusCode();
        filterAllowed += status == 200 ? 1 : 0;
        filterDenied += status == 429 ? 1 : 0;
      }
      int annotatedDenied = 0;
      for (int i = 0; i < 4; i++) {
        annotatedDenied += get(app, "/limited/alice").statusCode() == 429 ? 1 : 0;
      }
      assertThat(filterAllowed).isEqualTo(2);
      assertThat(filterDenied).isEqualTo(5);
      assertThat(annotatedDenied).isEqualTo(1);

      MeterRegistry registry = app.getBean(MeterRegistry.class);
      assertThat(decisions(registry, "open", "allowed")).isEqualTo(2);
      assertThat(decisions(registry, "open", "denied")).isEqualTo(5);
      assertThat(decisions(registry, "api", "allowed")).isEqualTo(3);
      assertThat(decisions(registry, "api", "denied")).isEqualTo(1);
      assertThat(registry.get(RateLimitMetrics.BACKEND_LATENCY).tag("outcome", "success").timer().count())
          .as("one backend call per check: 7 filtered, 4 annotated").isEqualTo(11);
    }
  }

  @Test
  void filterDenialsAreLoggedWithoutTheKey() throws Exception {
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
    try (ConfigurableApplicationContext app = start("ratelimit.log-denials=true",
        "ratelimit.log-denials-include-key=true")) {
      for (int i = 0; i < 3; i++) {
        get(app, "/open/" + i);
      }
      for (int i = 0; i < 4; i++) {
        get(app, "/limited/bob");
      }
    } finally {
      logger.removeHandler(capture);
    }
    assertThat(lines).containsExactly(
        "rate limit denied: source=filter policy=open outcome=denied retryAfterMs=40000",
        "rate limit denied: source=" + ActuatorApp.Limited.class.getName()
            + ".limited policy=api outcome=denied retryAfterMs=40000 key=\"bob\"");
  }
}

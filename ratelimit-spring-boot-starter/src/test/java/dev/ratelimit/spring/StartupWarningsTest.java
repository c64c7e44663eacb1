package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A correct application starts without a warning: {@link WebApp} (annotated controllers and an
 * outbound client, a filter rule, Actuator) on a real server, its start-up log captured.
 */
@ExtendWith(OutputCaptureExtension.class)
class StartupWarningsTest {

  @Test
  void aCorrectApplicationStartsWithoutAWarning(CapturedOutput output) {
    try (ConfigurableApplicationContext app = new SpringApplicationBuilder(WebApp.class).properties(
        "server.port=0",
        "ratelimit.policies.open.limit=3", "ratelimit.policies.open.window=1m",
        "ratelimit.filter.rules[0].name=open",
        "ratelimit.filter.rules[0].paths=/open/**",
        "ratelimit.filter.rules[0].policies=open").run()) {
      assertThat(app.getBean(RateLimitedMethods.class).size()).as("the annotated methods were parsed").isPositive();
    }
    assertThat(output.getAll())
        .as("the advisor is infrastructure: made while post processors are, none can apply to it")
        .doesNotContain("is not eligible for getting processed by all BeanPostProcessors")
        .doesNotContainPattern("(?m)^\\S+\\s+WARN ");
  }
}

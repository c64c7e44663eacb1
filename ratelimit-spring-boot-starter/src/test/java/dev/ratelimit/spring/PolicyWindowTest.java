package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@code ratelimit.policies.NAME.window} is bound as a {@link Duration} by Boot's conversion: the
 * forms it took as text still bind to the same window, and Boot's other forms bind too.
 */
class PolicyWindowTest {
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, AopAutoConfiguration.class));

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "1m     | PT1M",
      "60s    | PT1M",
      "500ms  | PT0.5S",
      "5m     | PT5M",
      "2h     | PT2H",
      "1d     | PT24H",
      "PT1M   | PT1M",
      "pt1m   | PT1M",
      "PT0.5S | PT0.5S",
      "60000  | PT1M", // a bare number is milliseconds, as for every duration Boot binds
      "1500us | PT0.0015S"})
  void aWindowBindsFromEachForm(String text, String expected) {
    runner.withPropertyValues("ratelimit.policies.api.limit=10", "ratelimit.policies.api.window=" + text)
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.getBean(RateLimitProperties.class).getPolicies().get("api").getWindow())
              .isEqualTo(Duration.parse(expected));
          assertThat(context.getBean(PolicyRegistry.class).get("api", "test").window())
              .isEqualTo(Duration.parse(expected));
        });
  }

  @Test
  void aWindowThatIsNoDurationFailsStartUpNamingTheProperty() {
    runner.withPropertyValues("ratelimit.policies.api.limit=10", "ratelimit.policies.api.window=1 minute")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("ratelimit.policies.api.window").hasStackTraceContaining("1 minute"));
  }

  @Test
  void aWindowBelowOneMillisecondFailsStartUpNamingThePolicy() {
    runner.withPropertyValues("ratelimit.policies.api.limit=10", "ratelimit.policies.api.window=0s")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("ratelimit.policies.api").hasStackTraceContaining("window must be at least 1 ms"));
    runner.withPropertyValues("ratelimit.policies.api.limit=10")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("ratelimit.policies.api.window is required"));
  }
}

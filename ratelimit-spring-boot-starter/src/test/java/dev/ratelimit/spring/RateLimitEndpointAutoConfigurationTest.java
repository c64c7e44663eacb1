package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.RateLimiter;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

/** When the endpoint bean exists: exposed, not switched off, Actuator present, ours not replaced. */
class RateLimitEndpointAutoConfigurationTest {
  private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, RateLimitEndpointAutoConfiguration.class));

  @Test
  void onlyWhenExposed() {
    runner.run(context -> assertThat(context).hasSingleBean(RateLimiter.class).doesNotHaveBean(RateLimitsEndpoint.class));
    runner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
        .run(context -> assertThat(context).hasSingleBean(RateLimitsEndpoint.class));
  }

  @Test
  void notWhenItsAccessIsNone() {
    runner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits",
        "management.endpoint.ratelimits.access=NONE")
        .run(context -> assertThat(context).doesNotHaveBean(RateLimitsEndpoint.class));
  }

  @Test
  void notWithoutActuatorOrWithoutALimiter() {
    runner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
        .withClassLoader(new FilteredClassLoader(Endpoint.class))
        .run(context -> assertThat(context).hasSingleBean(RateLimiter.class).doesNotHaveBean(RateLimitsEndpoint.class));
    runner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits", "ratelimit.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(RateLimitsEndpoint.class));
  }

  @Test
  void backsOffForTheApplicationsOwnEndpoint() {
    RateLimitsEndpoint own = new RateLimitsEndpoint(RateLimiter.inMemory(), new PolicyRegistry(Map.of()));
    runner.withPropertyValues("management.endpoints.web.exposure.include=ratelimits")
        .withBean(RateLimitsEndpoint.class, () -> own)
        .run(context -> assertThat(context.getBean(RateLimitsEndpoint.class)).isSameAs(own));
  }
}

package dev.ratelimit.spring.reactive;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.tck.docs.DocPage;
import dev.ratelimit.spring.RateLimitAutoConfiguration;
import dev.ratelimit.spring.RateLimitWebExceptionHandler;
import dev.ratelimit.webflux.RateLimitWebFilter;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;

/** Which filter a web application gets: the reactive one in a reactive application, the servlet one in a servlet one. */
class ReactiveAutoConfigurationTest {
  private static final String[] RULE = {"ratelimit.policies.api.limit=5", "ratelimit.policies.api.window=1m",
      "ratelimit.filter.rules[0].name=api", "ratelimit.filter.rules[0].paths=/api/**",
      "ratelimit.filter.rules[0].policies=api"};

  private final ReactiveWebApplicationContextRunner reactive = new ReactiveWebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class));
  private final WebApplicationContextRunner servlet = new WebApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class));

  @Test
  void aReactiveApplicationGetsTheWebFilterAndTheExceptionHandlerNotTheServletFilter() {
    reactive.withPropertyValues(RULE).run(context -> {
      assertThat(context).hasNotFailed().hasSingleBean(RateLimitWebFilter.class)
          .hasSingleBean(RateLimitWebExceptionHandler.class).doesNotHaveBean(FilterRegistrationBean.class);
      assertThat(context.getBean(RateLimitWebFilter.class).ruleNames()).containsExactly("api");
      assertThat(context.getBean(RateLimitWebFilter.class).getOrder()).isEqualTo(-101);
    });
    reactive.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(RateLimitWebFilter.class)
        .hasSingleBean(RateLimitWebExceptionHandler.class));
    reactive.withPropertyValues(RULE).withPropertyValues("ratelimit.filter.enabled=false", "ratelimit.filter.order=5")
        .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(RateLimitWebFilter.class));
  }

  @Test
  void thePagesPropertiesMakeTheWebFilter() throws Exception {
    java.util.Properties page = new java.util.Properties();
    page.load(new java.io.StringReader(DocPage.read("docs/reactive.md").block("properties", "ratelimit.filter.rules[0]")));
    reactive.withPropertyValues(page.stringPropertyNames().stream().map(n -> n + "=" + page.getProperty(n))
        .toArray(String[]::new)).run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context.getBean(RateLimitWebFilter.class).ruleNames()).containsExactly("api");
          assertThat(context.getBean(dev.ratelimit.spring.PolicyRegistry.class).get("api", "test").limit())
              .isEqualTo(100);
        });
  }

  @Test
  void aServletApplicationGetsTheServletFilterNotTheWebFilter() {
    servlet.withPropertyValues(RULE).run(context -> assertThat(context).hasNotFailed()
        .hasBean("rateLimitFilter").doesNotHaveBean(RateLimitWebFilter.class)
        .doesNotHaveBean(RateLimitWebExceptionHandler.class));
  }

  @Test
  void theWebFilterBacksOffForTheApplicationsOwn() {
    reactive.withPropertyValues(RULE).withUserConfiguration(OwnFilter.class).run(context ->
        assertThat(context.getBean(RateLimitWebFilter.class).ruleNames()).containsExactly("own"));
  }

  @Test
  void aRuleReadingWhatAReactiveRequestLacksFailsStartUpNamingTheProperty() {
    reactive.withPropertyValues(RULE).withPropertyValues("ratelimit.filter.rules[0].key=#request.servletPath")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("invalid ratelimit.filter.rules[0] in a reactive application")
            .hasStackTraceContaining("servletPath"));
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnFilter {
    @Bean
    RateLimitWebFilter rateLimitWebFilter() {
      return RateLimitWebFilter.builder(dev.ratelimit.RateLimiter.inMemory())
          .rule(dev.ratelimit.http.RateLimitRule.builder("own").path("/**")
              .policy(dev.ratelimit.Policy.parse("1/1s").withName("own")).build()).build();
    }
  }

}

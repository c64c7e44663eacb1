package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.cors.CorsConfiguration;
import org.springframework.web.cors.CorsConfigurationSource;
import org.springframework.web.cors.UrlBasedCorsConfigurationSource;
import org.springframework.web.servlet.config.annotation.CorsRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * A 429 from the filter carries the application's CORS headers (the filter runs before Spring
 * Security's and Spring MVC's CORS handling), so that a browser shows it to the page's script.
 */
class FilterCorsTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final String APP = "https://app.example";

  @RestController
  static class Api {
    @GetMapping("/api/items")
    String items() {
      return "items";
    }
  }

  /** CORS as Spring Security's {@code cors()} reads it: a bean named corsConfigurationSource. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(Api.class)
  static class SourceBeanApp {
    @Bean
    CorsConfigurationSource corsConfigurationSource() {
      CorsConfiguration cors = new CorsConfiguration();
      cors.addAllowedOrigin(APP);
      cors.addAllowedMethod("GET");
      cors.addExposedHeader("Retry-After");
      UrlBasedCorsConfigurationSource source = new UrlBasedCorsConfigurationSource();
      source.registerCorsConfiguration("/api/**", cors);
      return source;
    }
  }

  /** CORS as Spring MVC has it: WebMvcConfigurer mappings, and no source bean. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(Api.class)
  static class MvcMappingsApp implements WebMvcConfigurer {
    @Override
    public void addCorsMappings(CorsRegistry registry) {
      registry.addMapping("/api/**").allowedOrigins(APP).allowedMethods("GET").exposedHeaders("Retry-After");
    }
  }

  /** A bean of the source's name that is something else, and Spring MVC mappings allowing any origin. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(Api.class)
  static class MisnamedBeanApp implements WebMvcConfigurer {
    @Bean
    String corsConfigurationSource() {
      return "not a CorsConfigurationSource";
    }

    @Override
    public void addCorsMappings(CorsRegistry registry) {
      registry.addMapping("/api/**").allowedOriginPatterns("*").allowedMethods("GET");
    }
  }

  /** No CORS configured at all. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(Api.class)
  static class NoCorsApp {}

  private static ConfigurableApplicationContext start(Class<?> app, String... more) {
    List<String> properties = new ArrayList<>(List.of("server.port=0",
        "ratelimit.policies.api.limit=1", "ratelimit.policies.api.window=1m",
        "ratelimit.filter.rules[0].name=api",
        "ratelimit.filter.rules[0].paths=/api/**",
        "ratelimit.filter.rules[0].policies=api",
        "ratelimit.filter.rules[0].key=#headers['Origin'] ?: 'none'"));
    properties.addAll(List.of(more));
    return new SpringApplicationBuilder(app).properties(properties.toArray(String[]::new)).run();
  }

  private static HttpResponse<String> get(ConfigurableApplicationContext app, String origin) throws Exception {
    int port = ((WebServerApplicationContext) app).getWebServer().getPort();
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/items"));
    if (origin != null) {
      request.header("Origin", origin);
    }
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The second request of {@code origin} (the limit is 1 per origin): the filter's 429. */
  private static HttpResponse<String> denied(ConfigurableApplicationContext app, String origin) throws Exception {
    return denied(app, origin, 200);
  }

  /** {@link #denied(ConfigurableApplicationContext, String)}, the application answering the first {@code first}. */
  private static HttpResponse<String> denied(ConfigurableApplicationContext app, String origin, int first)
      throws Exception {
    assertThat(get(app, origin).statusCode()).as("the first of " + origin).isEqualTo(first);
    HttpResponse<String> denied = get(app, origin);
    assertThat(denied.statusCode()).as("the second of " + origin).isEqualTo(429);
    assertThat(denied.headers().firstValue("Retry-After")).isPresent();
    return denied;
  }

  /** The source bean (what Spring Security's cors() reads), else Spring MVC's mappings. */
  @ParameterizedTest
  @ValueSource(classes = {SourceBeanApp.class, MvcMappingsApp.class})
  void aDenialCarriesTheApplicationsCorsHeaders(Class<?> application) throws Exception {
    try (ConfigurableApplicationContext app = start(application)) {
      HttpResponse<String> denied = denied(app, APP);
      assertThat(denied.headers().firstValue("Access-Control-Allow-Origin")).hasValue(APP);
      assertThat(denied.headers().firstValue("Access-Control-Expose-Headers")).hasValue("Retry-After");
      // an origin the mappings refuse: Spring MVC answers the first 403 itself (the source bean is not used by the app)
      HttpResponse<String> other = denied(app, "https://elsewhere.example", application == MvcMappingsApp.class ? 403 : 200);
      assertThat(other.headers().firstValue("Access-Control-Allow-Origin"))
          .as("an origin the configuration refuses: none, and still the 429, not a 403").isEmpty();
    }
  }

  @Test
  void aMalformedOriginGetsNoCorsHeadersAndAMisnamedBeanIsPassedOver() throws Exception {
    try (ConfigurableApplicationContext app = start(MisnamedBeanApp.class)) { // allows any origin
      HttpResponse<String> denied = denied(app, "https://bad^origin", 403); // Spring MVC refuses it too
      assertThat(denied.headers().firstValue("Access-Control-Allow-Origin")).isEmpty();
      assertThat(denied.body()).contains("\"violated-policies\"");
    }
    try (ConfigurableApplicationContext app = start(MisnamedBeanApp.class)) {
      assertThat(denied(app, APP).headers().firstValue("Access-Control-Allow-Origin"))
          .as("not a source: Spring MVC's mappings are used instead").hasValue(APP);
    }
  }

  @Test
  void noCorsHeadersWithoutConfigurationOrWhenSwitchedOff() throws Exception {
    try (ConfigurableApplicationContext app = start(NoCorsApp.class)) {
      assertThat(denied(app, APP).headers().firstValue("Access-Control-Allow-Origin")).isEmpty();
    }
    try (ConfigurableApplicationContext app = start(SourceBeanApp.class, "ratelimit.filter.cors=false")) {
      assertThat(denied(app, APP).headers().firstValue("Access-Control-Allow-Origin")).isEmpty();
    }
    try (ConfigurableApplicationContext app = start(SourceBeanApp.class)) {
      assertThat(denied(app, null).headers().firstValue("Access-Control-Allow-Origin"))
          .as("not a cross-origin request").isEmpty();
    }
  }
}

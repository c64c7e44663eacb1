package dev.ratelimit.spring;

import dev.ratelimit.ManualClock;
import dev.ratelimit.annotation.RateLimited;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * A web application with Actuator (and so Micrometer), for the endpoint, metrics, policy-update and
 * denial-log tests over real HTTP: {@code /limited/{user}} is {@code @RateLimited} by the configured
 * policy {@code api}, {@code /open/**} is limited by the filter rule {@code open}; both policies are
 * fixed windows of one minute, on a manual clock.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(ActuatorApp.Limited.class)
class ActuatorApp {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @Bean
  InstantSource clock() {
    return ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
  }

  @RestController
  static class Limited {
    @GetMapping("/limited/{user}")
    @RateLimited(key = "#user", policy = "api")
    String limited(@PathVariable String user) {
      return "hello " + user;
    }

    @GetMapping("/open/{id}")
    String open(@PathVariable String id) {
      return "open " + id;
    }
  }

  /** Starts the application on a random port with these properties added to the defaults. */
  static ConfigurableApplicationContext start(String... properties) {
    List<String> all = new ArrayList<>(List.of("server.port=0",
        "spring.web.error.include-message=always",
        "ratelimit.backend=memory",
        "ratelimit.policies.api.limit=3", "ratelimit.policies.api.window=1m",
        "ratelimit.policies.api.algorithm=FIXED_WINDOW",
        "ratelimit.policies.open.limit=2", "ratelimit.policies.open.window=1m",
        "ratelimit.policies.open.algorithm=FIXED_WINDOW",
        "ratelimit.filter.rules[0].name=open",
        "ratelimit.filter.rules[0].paths=/open/**",
        "ratelimit.filter.rules[0].policies=open",
        "ratelimit.filter.rules[0].key=#clientIp"));
    all.addAll(List.of(properties));
    return new SpringApplicationBuilder(ActuatorApp.class).properties(all.toArray(String[]::new)).run();
  }

  static HttpResponse<String> send(ConfigurableApplicationContext app, String method, String path, String json)
      throws Exception {
    int port = ((WebServerApplicationContext) app).getWebServer().getPort();
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
    if (json != null) {
      request.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(json));
    } else {
      request.method(method, HttpRequest.BodyPublishers.noBody());
    }
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  static HttpResponse<String> get(ConfigurableApplicationContext app, String path) throws Exception {
    return send(app, "GET", path, null);
  }
}

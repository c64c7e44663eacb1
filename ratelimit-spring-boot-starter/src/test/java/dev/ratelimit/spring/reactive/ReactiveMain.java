package dev.ratelimit.spring.reactive;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.util.ClassUtils;

/**
 * {@link ReactiveApp} started from a main method, for {@link ReactiveWithoutServletApiTest}'s JVM
 * without the servlet API: prints whether the API is present and the statuses of the filter's and
 * a reactive {@code @RateLimited} handler's requests.
 */
public final class ReactiveMain {
  private ReactiveMain() {}

  public static void main(String[] args) throws Exception {
    System.out.println("servlet API present: "
        + ClassUtils.isPresent("jakarta.servlet.http.HttpServletRequest", ReactiveMain.class.getClassLoader()));
    try (ConfigurableApplicationContext context = new SpringApplicationBuilder(ReactiveApp.class)
        .web(WebApplicationType.REACTIVE)
        .properties("server.port=0", "server.address=127.0.0.1",
            "ratelimit.policies.api.limit=2", "ratelimit.policies.api.window=1m",
            "ratelimit.filter.rules[0].name=api", "ratelimit.filter.rules[0].paths=/api/**",
            "ratelimit.filter.rules[0].policies=api")
        .run()) {
      int port = ((WebServerApplicationContext) context).getWebServer().getPort();
      HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      List<String> statuses = new ArrayList<>();
      for (String path : List.of("/api/hello", "/api/hello", "/api/hello", "/greet/x", "/greet/x", "/greet/x")) {
        HttpResponse<String> response = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        statuses.add(response.statusCode() + (response.statusCode() == 429
            ? response.headers().firstValue("Content-Type").map(t -> ":" + t).orElse("") : ""));
      }
      System.out.println("statuses: " + String.join(" ", statuses));
    }
    System.exit(0);
  }
}

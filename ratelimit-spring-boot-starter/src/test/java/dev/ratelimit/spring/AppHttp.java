package dev.ratelimit.spring;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/** Requests over a real socket to an application a test started on {@code server.port=0}. */
final class AppHttp {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private AppHttp() {}

  /** {@code GET path} on {@code app}'s embedded server. */
  static HttpResponse<String> get(ConfigurableApplicationContext app, String path) throws Exception {
    int port = ((WebServerApplicationContext) app).getWebServer().getPort();
    return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}

package dev.ratelimit.service;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** A small real-HTTP client for the service's tests. */
final class Http {
  static final JsonMapper JSON = JsonMapper.builder().build();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  /** The admin token that the tests that reset keys configure (ratelimit-service.admin-token). */
  static final String ADMIN_TOKEN = "test-admin-token-0123456789";
  private final String base;
  private final String token;

  Http(int port) {
    this(port, null);
  }

  /** A client that sends {@code token} as {@code Authorization: Bearer} on every request. */
  Http(int port, String token) {
    this.base = "http://127.0.0.1:" + port;
    this.token = token;
  }

  HttpResponse<String> post(String path, String json) {
    return send(HttpRequest.newBuilder(URI.create(base + path)).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json)));
  }

  HttpResponse<String> post(String path, Map<String, ?> body) {
    return post(path, JSON.writeValueAsString(body));
  }

  HttpResponse<String> get(String path) {
    return send(HttpRequest.newBuilder(URI.create(base + path)).GET());
  }

  HttpResponse<String> delete(String path) {
    return send(HttpRequest.newBuilder(URI.create(base + path)).DELETE());
  }

  HttpResponse<String> send(HttpRequest.Builder request) {
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    try {
      return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  static JsonNode json(HttpResponse<String> response) {
    return JSON.readTree(response.body());
  }

  String base() {
    return base;
  }
}

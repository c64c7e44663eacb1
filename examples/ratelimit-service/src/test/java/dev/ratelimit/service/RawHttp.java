package dev.ratelimit.service;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import tools.jackson.databind.JsonNode;

/**
 * HTTP/1.1 over a plain socket, for what a well-behaved client cannot send: malformed requests,
 * bodies sent a byte at a time, pauses in the middle of headers.
 */
final class RawHttp implements AutoCloseable {
  /** A response: status, headers (names in lower case), and body. */
  record Response(int status, Map<String, String> headers, String body) {
    String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }

    JsonNode json() {
      return Http.JSON.readTree(body);
    }
  }

  private final Socket socket;
  private final InputStream in;

  RawHttp(int port, int readTimeoutMillis) {
    try {
      socket = new Socket(InetAddress.getLoopbackAddress(), port);
      socket.setSoTimeout(readTimeoutMillis);
      socket.setTcpNoDelay(true);
      in = new BufferedInputStream(socket.getInputStream());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Sends one request, as bytes, on a new connection and reads its response (at most 10 s). */
  static Response exchange(int port, byte[] request) {
    try (RawHttp http = new RawHttp(port, 10_000)) {
      http.send(request);
      return http.response();
    }
  }

  static Response exchange(int port, String request) {
    return exchange(port, request.getBytes(StandardCharsets.ISO_8859_1));
  }

  RawHttp send(byte[] bytes) {
    try {
      socket.getOutputStream().write(bytes);
      socket.getOutputStream().flush();
      return this;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  RawHttp send(String text) {
    return send(text.getBytes(StandardCharsets.ISO_8859_1));
  }

  /** Reads a response: its head, then a body by Content-Length, chunked, or up to the close. */
  Response response() {
    try {
      String statusLine = line();
      if (statusLine == null) {
        throw new IOException("the server closed the connection without a response");
      }
      int status = Integer.parseInt(statusLine.substring(9, 12));
      Map<String, String> headers = new TreeMap<>();
      for (String header = line(); header != null && !header.isEmpty(); header = line()) {
        int colon = header.indexOf(':');
        headers.put(header.substring(0, colon).trim().toLowerCase(Locale.ROOT), header.substring(colon + 1).trim());
      }
      byte[] body;
      if (headers.containsKey("content-length")) {
        body = in.readNBytes(Integer.parseInt(headers.get("content-length")));
      } else if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
        ByteArrayOutputStream content = new ByteArrayOutputStream();
        for (int size = Integer.parseInt(line().trim(), 16); size > 0; size = Integer.parseInt(line().trim(), 16)) {
          content.write(in.readNBytes(size));
          line();
        }
        line();
        body = content.toByteArray();
      } else {
        body = in.readAllBytes();
      }
      return new Response(status, headers, new String(body, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private String line() throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream(64);
    for (int b = in.read(); ; b = in.read()) {
      if (b < 0) {
        return line.size() == 0 ? null : line.toString(StandardCharsets.ISO_8859_1);
      }
      if (b == '\n') {
        String text = line.toString(StandardCharsets.ISO_8859_1);
        return text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
      }
      line.write(b);
    }
  }

  @Override
  public void close() {
    try {
      socket.close();
    } catch (IOException e) {
      // closing a test connection: nothing to do
    }
  }
}

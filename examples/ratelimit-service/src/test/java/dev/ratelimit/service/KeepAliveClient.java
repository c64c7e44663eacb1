package dev.ratelimit.service;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * A minimal HTTP/1.1 client on one keep-alive connection, for the load test: the JDK's
 * {@code HttpClient} costs more CPU per request than the service answering it, and on a 2-core
 * machine the load generator's cost is the service's loss. Sends a JSON POST, reads the status and
 * the body (by {@code Content-Length} or chunked), reconnects when the server closes the connection.
 */
final class KeepAliveClient implements AutoCloseable {
  /** A response: status and body. */
  record Response(int status, String body) {}

  private final int port;
  private Socket socket;
  private InputStream in;
  private OutputStream out;

  KeepAliveClient(int port) {
    this.port = port;
  }

  Response post(String path, String json) throws IOException {
    byte[] body = json.getBytes(StandardCharsets.UTF_8);
    byte[] head = ("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + "Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    if (socket == null) {
      connect();
    }
    out.write(head);
    out.write(body);
    out.flush();
    String statusLine = line();
    if (statusLine == null) { // the server closed an idle keep-alive connection: once more, fresh
      close();
      connect();
      out.write(head);
      out.write(body);
      out.flush();
      statusLine = line();
    }
    int status = Integer.parseInt(statusLine.substring(9, 12));
    int length = 0;
    boolean chunked = false;
    boolean closing = false;
    for (String header = line(); header != null && !header.isEmpty(); header = line()) {
      int colon = header.indexOf(':');
      String name = header.substring(0, colon).trim();
      String value = header.substring(colon + 1).trim();
      if (name.equalsIgnoreCase("Content-Length")) {
        length = Integer.parseInt(value);
      } else if (name.equalsIgnoreCase("Transfer-Encoding") && value.equalsIgnoreCase("chunked")) {
        chunked = true;
      } else if (name.equalsIgnoreCase("Connection") && value.equalsIgnoreCase("close")) {
        closing = true;
      }
    }
    byte[] content = chunked ? chunks() : in.readNBytes(length);
    if (closing) {
      close();
    }
    return new Response(status, new String(content, StandardCharsets.UTF_8));
  }

  /** A chunked body: hex size lines and their data, up to the empty last chunk. */
  private byte[] chunks() throws IOException {
    ByteArrayOutputStream content = new ByteArrayOutputStream(256);
    for (int size = Integer.parseInt(line().trim(), 16); size > 0; size = Integer.parseInt(line().trim(), 16)) {
      content.write(in.readNBytes(size));
      line(); // the CRLF after the data
    }
    line(); // the CRLF that ends the (trailer-less) body
    return content.toByteArray();
  }

  private void connect() throws IOException {
    socket = new Socket(InetAddress.getLoopbackAddress(), port);
    socket.setTcpNoDelay(true);
    in = new BufferedInputStream(socket.getInputStream(), 8192);
    out = socket.getOutputStream();
  }

  /** One CRLF-terminated line, or null at the end of the stream. */
  private String line() throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream(64);
    for (int b = in.read(); ; b = in.read()) {
      if (b < 0) {
        return line.size() == 0 ? null : line.toString(StandardCharsets.US_ASCII);
      }
      if (b == '\n') {
        String text = line.toString(StandardCharsets.US_ASCII);
        return text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
      }
      line.write(b);
    }
  }

  @Override
  public void close() throws IOException {
    if (socket != null) {
      socket.close();
      socket = null;
    }
  }
}

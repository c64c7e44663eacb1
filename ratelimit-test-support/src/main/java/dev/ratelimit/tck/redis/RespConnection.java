package dev.ratelimit.tck.redis;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * One blocking RESP2 connection: a command goes out as an array of bulk strings, and the reply
 * ({@code +}, {@code -}, {@code :}, {@code $}, {@code *}) comes back as a {@code String}, a {@code
 * Long}, a {@code List<Object>} or {@code null}. Not thread-safe; {@link RedisServer} pools these.
 */
final class RespConnection implements AutoCloseable {
  static final int CONNECT_TIMEOUT_MS = 2_000;
  static final int READ_TIMEOUT_MS = 15_000;

  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;

  private RespConnection(Socket socket) throws IOException {
    this.socket = socket;
    this.in = new BufferedInputStream(socket.getInputStream());
    this.out = new BufferedOutputStream(socket.getOutputStream());
  }

  /** Connects to {@code host:port}; a reply may take up to {@value #READ_TIMEOUT_MS} ms. */
  static RespConnection open(String host, int port) throws IOException {
    return open(host, port, READ_TIMEOUT_MS);
  }

  /** Connects to {@code host:port}; a reply may take up to {@code readTimeoutMs}. */
  static RespConnection open(String host, int port, int readTimeoutMs) throws IOException {
    return open(host, port, readTimeoutMs, null);
  }

  /**
   * Connects to {@code host:port}, through TLS when {@code tls} is not null (the handshake is
   * done here, so that a refused certificate fails the connect); a reply may take up to {@code
   * readTimeoutMs}.
   */
  static RespConnection open(String host, int port, int readTimeoutMs, SSLSocketFactory tls) throws IOException {
    Socket socket = new Socket();
    try {
      socket.connect(new InetSocketAddress(host, port), CONNECT_TIMEOUT_MS);
      socket.setSoTimeout(readTimeoutMs);
      socket.setTcpNoDelay(true);
      if (tls == null) {
        return new RespConnection(socket);
      }
      SSLSocket secure = (SSLSocket) tls.createSocket(socket, host, port, true);
      try {
        secure.startHandshake();
        return new RespConnection(secure);
      } catch (IOException | RuntimeException e) {
        secure.close();
        throw e;
      }
    } catch (IOException | RuntimeException e) {
      socket.close();
      throw e;
    }
  }

  /**
   * Sends one command and reads its reply. Arguments are sent as their {@code toString()} in UTF-8,
   * a {@code byte[]} as is.
   *
   * @throws RedisReplyException when the reply is an error; the connection stays usable
   * @throws ClosedException when the connection failed before any byte of the reply arrived (the
   *     server had closed it, or reset it)
   */
  Object call(Object... args) throws IOException {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    ascii(buf, "*" + args.length + "\r\n");
    for (int i = 0; i < args.length; i++) {
      if (args[i] == null) {
        throw new NullPointerException("command argument " + i + " is null");
      }
      Object a = args[i];
      byte[] b = a instanceof byte[] ? (byte[]) a : a.toString().getBytes(StandardCharsets.UTF_8);
      ascii(buf, "$" + b.length + "\r\n");
      buf.write(b, 0, b.length);
      ascii(buf, "\r\n");
    }
    int type;
    try {
      buf.writeTo(out);
      out.flush();
      type = in.read();
    } catch (SocketException e) {
      throw new ClosedException(e.toString());
    }
    if (type < 0) {
      throw new ClosedException("connection closed by the server");
    }
    Object reply = read(type);
    if (reply instanceof RedisReplyException) {
      // a fresh exception, so that the stack trace shows the caller
      throw new RedisReplyException(((RedisReplyException) reply).getMessage());
    }
    return reply;
  }

  private Object read(int type) throws IOException {
    String line = line();
    switch (type) {
      case '+':
        return line;
      case '-':
        return new RedisReplyException(line);
      case ':':
        return Long.parseLong(line);
      case '$': {
        int n = Integer.parseInt(line);
        if (n < 0) {
          return null;
        }
        byte[] b = in.readNBytes(n);
        if (b.length < n || in.read() != '\r' || in.read() != '\n') {
          throw new EOFException("truncated bulk string");
        }
        return new String(b, StandardCharsets.UTF_8);
      }
      case '*': {
        int n = Integer.parseInt(line);
        if (n < 0) {
          return null;
        }
        List<Object> list = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          list.add(read(next()));
        }
        return list;
      }
      default:
        throw new IOException("not a RESP2 reply type: " + (char) type + line);
    }
  }

  private int next() throws IOException {
    int c = in.read();
    if (c < 0) {
      throw new EOFException("connection closed in the middle of a reply");
    }
    return c;
  }

  private String line() throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    for (int c = next(); c != '\r'; c = next()) {
      b.write(c);
    }
    if (next() != '\n') {
      throw new IOException("CR without LF in a reply");
    }
    return b.toString(StandardCharsets.UTF_8);
  }

  private static void ascii(ByteArrayOutputStream buf, String s) {
    buf.writeBytes(s.getBytes(StandardCharsets.US_ASCII));
  }

  @Override
  public void close() {
    try {
      socket.close();
    } catch (IOException ignored) {
      // nothing to do
    }
  }

  /** The connection failed before any byte of the reply: it was dead when the command was sent. */
  static final class ClosedException extends IOException {
    private static final long serialVersionUID = 1L;

    ClosedException(String message) {
      super(message);
    }
  }
}

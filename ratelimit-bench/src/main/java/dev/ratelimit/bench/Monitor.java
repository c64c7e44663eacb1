package dev.ratelimit.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Counts the commands a server executes, through {@code MONITOR}, split into those sent by clients
 * (each one a round trip, or part of a pipeline) and those a script ran ({@code [0 lua]}).
 * Counting starts with {@link #start} and ends at {@link #stop}, which sends a marker through
 * {@code send} and waits until the monitor has seen it, so every earlier command is counted.
 */
final class Monitor implements AutoCloseable {
  private final Socket socket;
  private final Thread reader;
  private final Map<String, AtomicLong> client = new ConcurrentHashMap<>();
  private final Map<String, AtomicLong> lua = new ConcurrentHashMap<>();
  private volatile String marker;
  private volatile CountDownLatch markerSeen;
  private volatile boolean counting;

  private Monitor(Socket socket) {
    this.socket = socket;
    this.reader = new Thread(this::read, "bench-monitor");
    this.reader.setDaemon(true);
  }

  /** Connects, sends {@code MONITOR}, and starts reading; counting is off until {@link #start}. */
  static Monitor open(String host, int port) {
    try {
      Socket s = new Socket();
      s.connect(new InetSocketAddress(host, port), 2_000);
      OutputStream out = s.getOutputStream();
      out.write("*1\r\n$7\r\nMONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      Monitor m = new Monitor(s);
      m.reader.start();
      return m;
    } catch (IOException e) {
      throw new UncheckedIOException("MONITOR on " + host + ":" + port, e);
    }
  }

  /** Clears the counts and counts from now on. */
  void start(Consumer<String> send) {
    sync(send);
    client.clear();
    lua.clear();
    counting = true;
  }

  /** Stops counting once every command sent before this call has been seen. */
  void stop(Consumer<String> send) {
    sync(send);
    counting = false;
  }

  /** Commands sent by clients (lower-case name to calls), without the markers. */
  Map<String, Long> clientCommands() {
    return snapshot(client);
  }

  /** Commands that scripts ran. */
  Map<String, Long> scriptCommands() {
    return snapshot(lua);
  }

  private static Map<String, Long> snapshot(Map<String, AtomicLong> counts) {
    Map<String, Long> copy = new TreeMap<>();
    counts.forEach((k, v) -> copy.put(k, v.get()));
    return copy;
  }

  /** Sends ECHO of a fresh marker through {@code send} and waits until the monitor has read it. */
  private void sync(Consumer<String> send) {
    String m = "bench-monitor-" + System.nanoTime();
    CountDownLatch seen = new CountDownLatch(1);
    marker = m;
    markerSeen = seen;
    send.accept(m);
    try {
      if (!seen.await(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("MONITOR did not show the marker in 30 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private void read() {
    try (BufferedReader in = new BufferedReader(
        new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = in.readLine()) != null; ) {
        // +1700000000.123456 [0 127.0.0.1:5555] "EVALSHA" "..." ...   or   [0 lua] "GET" ...
        int open = line.indexOf('[');
        int close = line.indexOf(']', open + 1);
        if (!line.startsWith("+") || open < 0 || close < 0) {
          continue;
        }
        String m = marker;
        if (m != null && line.contains(m)) {
          CountDownLatch seen = markerSeen;
          if (seen != null) {
            seen.countDown();
          }
          continue;
        }
        if (!counting) {
          continue;
        }
        int q1 = line.indexOf('"', close);
        int q2 = q1 < 0 ? -1 : line.indexOf('"', q1 + 1);
        if (q2 < 0) {
          continue;
        }
        String command = line.substring(q1 + 1, q2).toLowerCase(java.util.Locale.ROOT);
        boolean fromScript = line.substring(open, close).endsWith(" lua");
        (fromScript ? lua : client).computeIfAbsent(command, k -> new AtomicLong()).incrementAndGet();
      }
    } catch (IOException e) {
      // closed
    }
  }

  @Override
  public void close() {
    try {
      socket.close();
    } catch (IOException e) {
      // ignore
    }
  }
}

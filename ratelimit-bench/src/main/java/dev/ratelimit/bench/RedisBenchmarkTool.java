package dev.ratelimit.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Runs {@code redis-benchmark} with one custom command and reads its {@code --csv} output. */
final class RedisBenchmarkTool {
  private final Path binary;

  RedisBenchmarkTool(Path binary) {
    this.binary = binary;
  }

  /** redis-benchmark on PATH, or null. */
  static RedisBenchmarkTool find() {
    Path p = dev.ratelimit.tck.redis.RedisServer.executableOnPath("redis-benchmark");
    return p == null ? null : new RedisBenchmarkTool(p);
  }

  Path binary() {
    return binary;
  }

  /** The requests/s and latencies redis-benchmark reported, and whether it saw error replies. */
  record Result(double requestsPerSecond, double p50Millis, double p99Millis, boolean errors,
      String output) {}

  /** The command line of one run (for printing). */
  List<String> commandLine(String host, int port, int clients, int pipeline, long requests,
      int keyspace, List<String> command) {
    List<String> cmd = new ArrayList<>(List.of(binary.toString(), "-h", host, "-p",
        Integer.toString(port), "-c", Integer.toString(clients), "-P", Integer.toString(pipeline),
        "-n", Long.toString(requests), "-r", Integer.toString(keyspace), "-e", "--csv"));
    cmd.addAll(command);
    return cmd;
  }

  Result run(List<String> commandLine) {
    Process p;
    try {
      p = new ProcessBuilder(commandLine).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + binary + ": " + e.getMessage(), e);
    }
    CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> {
      try {
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      } catch (IOException e) {
        return "(output unreadable: " + e + ")";
      }
    });
    try {
      if (!p.waitFor(10, TimeUnit.MINUTES)) {
        p.destroyForcibly();
        throw new IllegalStateException("redis-benchmark did not finish in 10 minutes");
      }
      String output = out.get(1, TimeUnit.MINUTES);
      if (p.exitValue() != 0) {
        throw new IllegalStateException("redis-benchmark exited with " + p.exitValue() + ":\n" + output);
      }
      return parse(output);
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException("cannot read redis-benchmark's output", e);
    }
  }

  /**
   * Reads {@code --csv} output: a header line naming the columns ({@code "test","rps",
   * "avg_latency_ms",...,"p50_latency_ms",...}) and one line per test; falls back on {@code -q}'s
   * {@code "...: 12345.67 requests per second"}.
   */
  static Result parse(String output) {
    boolean errors = output.contains("Error from server") || output.contains("ERR ")
        || output.contains("NOSCRIPT");
    List<String> header = null;
    for (String line : output.split("\r?\n|\r")) {
      List<String> cells = csv(line.trim());
      if (cells.contains("rps")) {
        header = cells;
        continue;
      }
      if (header != null && cells.size() == header.size()) {
        double rps = Double.parseDouble(cells.get(header.indexOf("rps")));
        return new Result(rps, cell(header, cells, "p50_latency_ms"),
            cell(header, cells, "p99_latency_ms"), errors, output);
      }
    }
    java.util.regex.Matcher m = java.util.regex.Pattern
        .compile("([0-9.]+) requests per second").matcher(output);
    if (m.find()) {
      return new Result(Double.parseDouble(m.group(1)), Double.NaN, Double.NaN, errors, output);
    }
    throw new IllegalStateException("no requests per second in redis-benchmark's output:\n" + output);
  }

  private static double cell(List<String> header, List<String> cells, String name) {
    int i = header.indexOf(name);
    return i < 0 ? Double.NaN : Double.parseDouble(cells.get(i));
  }

  /** Splits one CSV line whose cells are double-quoted (or bare). */
  private static List<String> csv(String line) {
    List<String> cells = new ArrayList<>();
    StringBuilder cell = new StringBuilder();
    boolean quoted = false;
    for (int i = 0; i < line.length(); i++) {
      char ch = line.charAt(i);
      if (ch == '"') {
        if (quoted && i + 1 < line.length() && line.charAt(i + 1) == '"') {
          cell.append('"');
          i++;
        } else {
          quoted = !quoted;
        }
      } else if (ch == ',' && !quoted) {
        cells.add(cell.toString());
        cell.setLength(0);
      } else {
        cell.append(ch);
      }
    }
    cells.add(cell.toString());
    return cells;
  }
}

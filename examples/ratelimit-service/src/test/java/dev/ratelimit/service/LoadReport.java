package dev.ratelimit.service;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** The load runs' figures: latency percentiles, and rows of Markdown tables in target/load-report.md. */
final class LoadReport {
  private static final Path FILE = Path.of("target/load-report.md");

  private LoadReport() {}

  /** The {@code p} percentile (0 to 1) of sorted latencies in nanoseconds, in milliseconds. */
  static double percentileMillis(long[] sortedNanos, double p) {
    if (sortedNanos.length == 0) {
      return Double.NaN;
    }
    int index = (int) Math.min(sortedNanos.length - 1, Math.ceil(p * sortedNanos.length) - 1);
    return sortedNanos[Math.max(0, index)] / 1_000.0 / 1_000.0;
  }

  /** Appends {@code row} to the table titled {@code title}, its title and {@code header} first if new. */
  static synchronized void append(String title, String header, String row) throws IOException {
    String heading = "\n" + title + "\n\n";
    String text = Files.exists(FILE) ? Files.readString(FILE) : "";
    if (!text.endsWith(heading + header) && !text.contains(heading + header + "|")) {
      Files.writeString(FILE, heading + header, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }
    Files.writeString(FILE, row + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    System.out.println("LOAD " + row);
  }
}

package dev.ratelimit.bench;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Draws, as SVG, what each algorithm admits of one bursty trace: 10 per second, one key, a manual
 * clock. The trace is a steady 5 requests/s with two bursts of 25 on either side of a window edge
 * (0.80–1.19 s) and a burst of 40 at 3.0–3.5 s. One panel per algorithm: offered requests per
 * 100 ms as grey outlines, admitted ones as bars (LEAKY_BUCKET by the time they leave, after their
 * delay), with the most admitted in any sliding second. The fixed window's edge burst shows as 20
 * in one second; the sliding ones hold 10; the buckets admit their burst and then a steady rate.
 *
 * <pre>java -cp ratelimit-bench/target/benchmarks.jar dev.ratelimit.bench.AdmissionChart docs/admissions.svg</pre>
 */
public final class AdmissionChart {
  static final Policy POLICY = Policy.of(10, Duration.ofSeconds(1));
  static final long TRACE_MICROS = 6_000_000L;
  static final long BIN_MICROS = 100_000L;
  static final int BINS = (int) (TRACE_MICROS / BIN_MICROS);
  static final Instant START = Instant.ofEpochSecond(1_700_000_000L);

  private AdmissionChart() {}

  /** Writes the chart to the file named by the first argument (default {@code docs/admissions.svg}). */
  public static void main(String[] args) throws IOException {
    Path out = Path.of(args.length > 0 ? args[0] : "docs/admissions.svg");
    long[] trace = trace();
    List<Panel> panels = new ArrayList<>();
    for (Algorithm algorithm : Algorithm.values()) {
      panels.add(run(algorithm, trace));
    }
    if (out.getParent() != null) {
      Files.createDirectories(out.getParent());
    }
    Files.writeString(out, svg(trace, panels));
    for (Panel panel : panels) {
      System.out.printf(Locale.ROOT, "%-15s admitted %3d of %d, most in any 1 s: %d%n",
          panel.algorithm, panel.admitted(), trace.length, panel.maxInOneSecond);
    }
    System.out.println("wrote " + out);
  }

  /** Request times in µs from the start: steady 5/s, 25 + 25 around the 1 s edge, 40 at 3.0–3.5 s. */
  static long[] trace() {
    List<Long> times = new ArrayList<>();
    for (long t = 0; t < TRACE_MICROS; t += 200_000L) {
      times.add(t + 50_000L);
    }
    for (int i = 0; i < 25; i++) {
      times.add(800_000L + i * 7_600L);   // 0.800 .. 0.982 s
      times.add(1_000_000L + i * 7_600L); // 1.000 .. 1.182 s
    }
    for (int i = 0; i < 40; i++) {
      times.add(3_000_000L + i * 12_500L);
    }
    return times.stream().mapToLong(Long::longValue).sorted().toArray();
  }

  record Panel(Algorithm algorithm, int[] admittedPerBin, long[] admittedAt, int maxInOneSecond) {
    int admitted() {
      return admittedAt.length;
    }
  }

  static Panel run(Algorithm algorithm, long[] trace) {
    ManualClock clock = ManualClock.at(START);
    Policy policy = POLICY.withAlgorithm(algorithm);
    List<Long> admitted = new ArrayList<>();
    try (RateLimiter limiter = RateLimiter.builder().clock(clock).build()) {
      for (long t : trace) {
        clock.set(START.plusNanos(t * 1_000L));
        Decision decision = limiter.check("chart", policy);
        if (decision.allowed()) {
          admitted.add(t + decision.delay().toNanos() / 1_000L); // when it acts (leaves, for LEAKY_BUCKET)
        }
      }
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    long[] at = admitted.stream().mapToLong(Long::longValue).sorted().toArray();
    int[] bins = new int[BINS];
    for (long t : at) {
      if (t < TRACE_MICROS) {
        bins[(int) (t / BIN_MICROS)]++;
      }
    }
    int max = 0;
    for (int i = 0, j = 0; i < at.length; i++) { // most admissions in any window [t, t + 1 s)
      while (at[j] <= at[i] - 1_000_000L) {
        j++;
      }
      max = Math.max(max, i - j + 1);
    }
    return new Panel(algorithm, bins, at, max);
  }

  static String svg(long[] trace, List<Panel> panels) {
    int[] offered = new int[BINS];
    for (long t : trace) {
      offered[(int) (t / BIN_MICROS)]++;
    }
    int left = 60;
    int barWidth = 14;
    int panelHeight = 110;
    int top = 50;
    int width = left + BINS * barWidth + 30;
    int height = top + panels.size() * (panelHeight + 30) + 40;
    int scaleMax = 20; // requests per bin drawn full height
    double unit = (panelHeight - 20) / (double) scaleMax;
    StringBuilder svg = new StringBuilder();
    svg.append(String.format(Locale.ROOT,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">%n",
        width, height));
    svg.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", width, height));
    svg.append(String.format(Locale.ROOT,
        "<text x=\"%d\" y=\"22\" font-size=\"15\" font-weight=\"bold\">Admitted per 100 ms, policy 10 per second, one key, same bursty trace (%d requests)</text>%n",
        left, trace.length));
    svg.append(String.format(Locale.ROOT,
        "<text x=\"%d\" y=\"40\" fill=\"#555\">grey outline: offered; bars: admitted (LEAKY_BUCKET: when they leave); dashed: 1 s window edges. Generated by AdmissionChart.</text>%n",
        left));
    String[] colours = {"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
    for (int p = 0; p < panels.size(); p++) {
      Panel panel = panels.get(p);
      int y0 = top + p * (panelHeight + 30) + 20;
      int base = y0 + panelHeight;
      svg.append(String.format(Locale.ROOT,
          "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text><text x=\"%d\" y=\"%d\" fill=\"#333\">admitted %d of %d; most in any 1 s: %d</text>%n",
          left, y0 + 4, panel.algorithm(), left + 140, y0 + 4, panel.admitted(), trace.length, panel.maxInOneSecond()));
      for (int s = 0; s <= TRACE_MICROS / 1_000_000L; s++) {
        int x = left + (int) (s * 1_000_000L / BIN_MICROS) * barWidth;
        svg.append(String.format(Locale.ROOT,
            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#bbb\" stroke-dasharray=\"3,3\"/>%n", x, y0 + 10, x, base));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"#555\" text-anchor=\"middle\">%d s</text>%n",
            x, base + 14, s));
      }
      svg.append(String.format(Locale.ROOT,
          "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>%n", left, base, left + BINS * barWidth, base));
      svg.append(String.format(Locale.ROOT,
          "<text x=\"%d\" y=\"%d\" fill=\"#555\" text-anchor=\"end\">%d</text><text x=\"%d\" y=\"%d\" fill=\"#555\" text-anchor=\"end\">0</text>%n",
          left - 6, base - (int) (10 * unit) + 4, 10, left - 6, base + 4));
      for (int b = 0; b < BINS; b++) {
        int x = left + b * barWidth;
        int admittedHeight = (int) Math.round(Math.min(scaleMax, panel.admittedPerBin()[b]) * unit);
        int offeredHeight = (int) Math.round(Math.min(scaleMax, offered[b]) * unit);
        if (admittedHeight > 0) {
          svg.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>%n",
              x + 1, base - admittedHeight, barWidth - 2, admittedHeight, colours[p % colours.length]));
        }
        if (offeredHeight > 0) {
          svg.append(String.format(Locale.ROOT,
              "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>%n",
              x + 1, base - offeredHeight, barWidth - 2, offeredHeight));
        }
      }
    }
    svg.append("</svg>\n");
    return svg.toString();
  }
}

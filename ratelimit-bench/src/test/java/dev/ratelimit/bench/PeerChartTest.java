package dev.ratelimit.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.tck.docs.DocPage;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;

/**
 * The peer chart is well-formed and draws the report's figures, and the committed docs/peers.svg is
 * what PeerChart draws now ({@code -Ddocs.regenerate=true} rewrites it instead of failing).
 */
class PeerChartTest {
  @Test
  void theChartDrawsEveryRowWithItsRatioToOurs() throws Exception {
    String svg = PeerChart.svg(PeerChart.ROWS);
    Document document = DocumentBuilderFactory.newInstance().newDocumentBuilder()
        .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
    assertThat(document.getDocumentElement().getTagName()).isEqualTo("svg");
    assertThat(document.getElementsByTagName("rect").getLength()).as("the background and a bar per row")
        .isEqualTo(1 + PeerChart.ROWS.size());
    assertThat(svg).contains("169,306", "66,709 (ours: 2.54×)", "51,450 (ours: 3.29×)", "312,994 (ours: 0.54×)",
        "commit 4fd18da");
  }

  @Test
  void theCommittedChartIsCurrent() throws Exception {
    Path committed = DocPage.root().resolve("docs/peers.svg");
    String current = PeerChart.svg(PeerChart.ROWS);
    if (Boolean.getBoolean("docs.regenerate")) {
      Files.writeString(committed, current, StandardCharsets.UTF_8);
    }
    assertThat(committed).as("docs/peers.svg; regenerate it: java -cp ratelimit-bench/target/benchmarks.jar"
        + " dev.ratelimit.bench.PeerChart docs/peers.svg (or this test with -Ddocs.regenerate=true)").exists();
    assertThat(Files.readString(committed, StandardCharsets.UTF_8)).as("docs/peers.svg is PeerChart's current output;"
        + " regenerate it: java -cp ratelimit-bench/target/benchmarks.jar dev.ratelimit.bench.PeerChart docs/peers.svg")
        .isEqualTo(current);
  }
}

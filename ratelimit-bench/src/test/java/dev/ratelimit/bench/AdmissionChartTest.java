package dev.ratelimit.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Algorithm;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;

/** The chart's numbers are the algorithms' known shapes, and its SVG is well-formed. */
class AdmissionChartTest {

  @Test
  void fixedWindowBurstsAtTheEdgeTheSlidingOnesDoNot() throws Exception {
    long[] trace = AdmissionChart.trace();
    List<AdmissionChart.Panel> panels = new ArrayList<>();
    for (Algorithm algorithm : Algorithm.values()) {
      panels.add(AdmissionChart.run(algorithm, trace));
    }
    assertThat(panels.get(Algorithm.FIXED_WINDOW.ordinal()).maxInOneSecond()).isGreaterThan(15);
    assertThat(panels.get(Algorithm.SLIDING_LOG.ordinal()).maxInOneSecond()).isEqualTo(10);
    assertThat(panels.get(Algorithm.SLIDING_WINDOW.ordinal()).maxInOneSecond()).isLessThanOrEqualTo(10);
    assertThat(panels.get(Algorithm.LEAKY_BUCKET.ordinal()).maxInOneSecond()).isLessThanOrEqualTo(10);
    // GCRA and the token bucket agree with each other: burst 10, then 10 per second
    assertThat(panels.get(Algorithm.GCRA.ordinal()).admittedPerBin())
        .containsExactly(panels.get(Algorithm.TOKEN_BUCKET.ordinal()).admittedPerBin());

    String svg = AdmissionChart.svg(trace, panels);
    Document document = DocumentBuilderFactory.newInstance().newDocumentBuilder()
        .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
    assertThat(document.getDocumentElement().getTagName()).isEqualTo("svg");
    assertThat(svg).contains("FIXED_WINDOW", "LEAKY_BUCKET", "most in any 1 s: 10");
  }
}

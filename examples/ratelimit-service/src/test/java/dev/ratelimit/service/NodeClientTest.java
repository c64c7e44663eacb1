package dev.ratelimit.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.ratelimit.ManualClock;
import dev.ratelimit.tck.docs.DocPage;
import dev.ratelimit.tck.redis.RedisServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;

/**
 * Runs the Node client snippet of docs/decision-service.md, as it is written there, with {@code node} against the
 * service on a manual clock, and checks what it prints. Needs {@code node} on the PATH (18+, for
 * the built-in fetch); without it the test is skipped (it says so).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class NodeClientTest {
  static final String PAGE = "docs/decision-service.md";

  @TestConfiguration
  static class Clock {
    @Bean
    ManualClock nodeTestClock() {
      return ManualClock.at(Instant.ofEpochSecond(1_800_000_000L));
    }
  }

  @LocalServerPort
  int port;

  @Test
  void theSnippetPrintsFiveAllowedThenADenial(@TempDir Path dir) throws Exception {
    Path node = RedisServer.executableOnPath("node");
    assumeTrue(node != null, "node is not on the PATH: the Node snippet of " + PAGE + " was not run");
    Path script = dir.resolve("check.mjs");
    Files.writeString(script, snippet("Node (18+", "```js"));

    ProcessBuilder builder = new ProcessBuilder(node.toString(), script.toString()).redirectErrorStream(true);
    builder.environment().put("RATELIMIT_URL", "http://127.0.0.1:" + port);
    Process process = builder.start();
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);

    assertThat(process.exitValue()).as(output).isZero();
    assertThat(output.lines()).containsExactly(
        "1: allowed=true remaining=4 retry_after=0",
        "2: allowed=true remaining=3 retry_after=0",
        "3: allowed=true remaining=2 retry_after=0",
        "4: allowed=true remaining=1 retry_after=0",
        "5: allowed=true remaining=0 retry_after=0",
        "6: allowed=false remaining=0 retry_after=900");
  }

  /** The first code block of kind {@code fence} after the line starting with {@code heading}. */
  static String snippet(String heading, String fence) throws IOException {
    String readme = DocPage.read(PAGE).text();
    int from = readme.indexOf("\n" + heading);
    assertThat(from).as(PAGE + " section starting with " + heading).isPositive();
    int start = readme.indexOf(fence + "\n", from) + fence.length() + 1;
    int end = readme.indexOf("\n```", start);
    return readme.substring(start, end + 1);
  }
}

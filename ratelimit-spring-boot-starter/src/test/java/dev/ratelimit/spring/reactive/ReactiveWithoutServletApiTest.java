package dev.ratelimit.spring.reactive;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The starter in a reactive application without the servlet API, as a WebFlux application has it:
 * {@link ReactiveMain} in a JVM whose class path is this one's without any entry holding the
 * servlet API. The filter and a reactive {@code @RateLimited} handler answer 429 there too.
 */
class ReactiveWithoutServletApiTest {
  private static final String SERVLET_CLASS = "jakarta/servlet/http/HttpServletRequest.class";

  @Test
  @Timeout(120)
  void aReactiveApplicationWithoutTheServletApiIsLimited() throws Exception {
    List<String> classPath = new ArrayList<>();
    int dropped = 0;
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (holdsServletApi(Path.of(entry))) {
        dropped++;
      } else {
        classPath.add(entry);
      }
    }
    assertThat(dropped).as("the servlet API is on this class path, to be left out").isPositive();
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Process child = new ProcessBuilder(java.toString(), "-cp", String.join(File.pathSeparator, classPath),
        ReactiveMain.class.getName()).redirectErrorStream(true).start();
    String output;
    try {
      output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
    } finally {
      child.destroyForcibly();
    }
    assertThat(child.exitValue()).as(output).isZero();
    assertThat(output).contains("servlet API present: false").contains("statuses: 200 200 429:application/problem+json"
        + " 200 200 429:application/problem+json");
  }

  private static boolean holdsServletApi(Path entry) throws IOException {
    if (Files.isDirectory(entry)) {
      return Files.exists(entry.resolve(SERVLET_CLASS));
    }
    if (!Files.isRegularFile(entry)) {
      return false;
    }
    try (ZipFile jar = new ZipFile(entry.toFile())) {
      return jar.getEntry(SERVLET_CLASS) != null;
    }
  }
}

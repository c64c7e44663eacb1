package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.spring.nonweb.NonWebApp;
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
 * The starter in an application without the servlet API: {@link NonWebApp} in a JVM whose class
 * path is this one's without any entry holding the servlet API (its jar, and Tomcat's, which
 * bundles it). It started and failed before: the aspect's methods named servlet types.
 */
class NonWebApplicationTest {
  private static final String SERVLET_CLASS = "jakarta/servlet/http/HttpServletRequest.class";

  @Test
  @Timeout(120)
  void anApplicationWithoutTheServletApiStartsAndItsRateLimitedMethodsAreLimited() throws Exception {
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
        NonWebApp.class.getName()).redirectErrorStream(true).start();
    String output;
    try {
      output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
    } finally {
      child.destroyForcibly();
    }
    assertThat(child.exitValue()).as(output).isZero();
    assertThat(output).contains("servlet API present: false").contains("calls: ok ok denied ok");
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

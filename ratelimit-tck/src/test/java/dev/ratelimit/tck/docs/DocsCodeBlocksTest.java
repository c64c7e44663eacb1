package dev.ratelimit.tck.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every code block of the documentation is either run by a test or plainly not code to run: a block
 * of code or configuration is preceded by {@code <!-- run by SomeTest -->}, naming a test class of
 * the repository that reads that page (it mentions the page's path), or by
 * {@code <!-- not run: why -->}; commands and their output are fenced as {@code bash},
 * {@code console} or {@code text}.
 */
class DocsCodeBlocksTest {
  private static final Set<String> COMMANDS_AND_OUTPUT = Set.of("bash", "console", "text");
  private static final Pattern FENCE = Pattern.compile("(?m)^```([a-z]*)\n(?:.*?\n)??```$", Pattern.DOTALL);
  private static final Pattern RUN_BY = Pattern.compile("<!-- run by ([A-Za-z0-9_]+) -->\n$");
  private static final Pattern NOT_RUN = Pattern.compile("<!-- not run: [^>]+ -->\n$");

  @Test
  void everyBlockOfCodeIsRunByATestThatReadsItsPage() throws IOException {
    Path root = DocPage.root();
    List<String> problems = new ArrayList<>();
    for (Path page : DocsLinksTest.pages()) {
      String name = root.relativize(page).toString().replace('\\', '/');
      String text = Files.readString(page, StandardCharsets.UTF_8);
      Matcher m = FENCE.matcher(text);
      while (m.find()) {
        String language = m.group(1);
        int line = (int) text.substring(0, m.start()).lines().count() + 1;
        String where = name + ":" + line + " ```" + language;
        if (language.isEmpty()) {
          problems.add(where + " has no language (bash, console or text for commands and output)");
          continue;
        }
        if (COMMANDS_AND_OUTPUT.contains(language)) {
          continue;
        }
        String before = text.substring(0, m.start());
        Matcher runBy = RUN_BY.matcher(before);
        if (runBy.find()) {
          Optional<Path> test = testSource(root, runBy.group(1));
          if (test.isEmpty()) {
            problems.add(where + ": no test class " + runBy.group(1));
          } else if (!Files.readString(test.get(), StandardCharsets.UTF_8).contains(name)) {
            problems.add(where + ": " + runBy.group(1) + " does not read " + name);
          }
        } else if (!NOT_RUN.matcher(before).find()) {
          problems.add(where + ": no <!-- run by SomeTest --> (or <!-- not run: why -->) line before it");
        }
      }
    }
    assertThat(problems).as("code blocks no test runs").isEmpty();
  }

  /** The source of a test class of that name under any module's src/test/java. */
  static Optional<Path> testSource(Path root, String className) throws IOException {
    try (Stream<Path> files = Files.walk(root, 12)) {
      return files.filter(p -> p.getFileName().toString().equals(className + ".java"))
          .filter(p -> p.toString().replace('\\', '/').contains("/src/test/java/"))
          .filter(p -> !p.toString().contains("/target/"))
          .findFirst();
    }
  }
}

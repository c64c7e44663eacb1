package dev.ratelimit.tck.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Markdown page of the repository's documentation, for the tests that run its code blocks: they
 * read the blocks from the page itself, so a page and the code it shows cannot drift apart.
 */
public final class DocPage {
  private static final Pattern FENCE = Pattern.compile("(?m)^```([a-z]*)\n(.*?)^```$", Pattern.DOTALL);

  private final String path;
  private final String text;

  private DocPage(String path, String text) {
    this.path = path;
    this.text = text;
  }

  /** Reads a page by its path from the repository's root, e.g. {@code docs/servlet-filter.md}. */
  public static DocPage read(String path) {
    Path file = root().resolve(path);
    try {
      return new DocPage(path, Files.readString(file, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }

  /**
   * The repository's root: the nearest directory, from the working directory (a module's) up,
   * that holds the Maven wrapper and {@code docs/}.
   */
  public static Path root() {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.isRegularFile(dir.resolve("mvnw")) && Files.isDirectory(dir.resolve("docs"))) {
        return dir;
      }
    }
    throw new IllegalStateException("no repository root (mvnw and docs/) above " + Path.of("").toAbsolutePath());
  }

  /** The page's whole text. */
  public String text() {
    return text;
  }

  /** The contents of the page's code blocks fenced as {@code language}, in order, each ending with a newline. */
  public List<String> blocks(String language) {
    Matcher m = FENCE.matcher(text);
    List<String> blocks = new ArrayList<>();
    while (m.find()) {
      if (m.group(1).equals(language)) {
        blocks.add(m.group(2));
      }
    }
    if (blocks.isEmpty()) {
      throw new AssertionError(path + " has no ```" + language + " block");
    }
    return blocks;
  }

  /** The one code block fenced as {@code language} whose text contains {@code marker}. */
  public String block(String language, String marker) {
    List<String> found = blocks(language).stream().filter(b -> b.contains(marker)).toList();
    if (found.size() != 1) {
      throw new AssertionError(path + " has " + found.size() + " ```" + language + " blocks with '" + marker
          + "', expected one");
    }
    return found.get(0);
  }

  /**
   * Asserts that the test {@code source} (a path from the module's directory) runs {@code block}:
   * every non-blank line of the block appears, in order, among the source's lines (both trimmed;
   * a block's {@code { ... }} stands for any body, so it matches a line ending with an opening
   * brace).
   */
  public void assertRunBy(String block, String source) {
    List<String> lines;
    try {
      lines = Files.readAllLines(Path.of(source), StandardCharsets.UTF_8).stream().map(String::strip).toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    int at = 0;
    for (String wanted : block.lines().map(String::strip).filter(l -> !l.isEmpty()).toList()) {
      String line = wanted.endsWith("{ ... }") ? wanted.substring(0, wanted.length() - "{ ... }".length()) + "{" : wanted;
      int found = lines.subList(at, lines.size()).indexOf(line);
      if (found < 0) {
        throw new AssertionError("a line of " + path + "'s block is not in " + source + " (after its line " + at
            + "): " + wanted + "\nKeep the page's block and the test's code the same.");
      }
      at += found + 1;
    }
  }
}

package dev.ratelimit.tck.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The documentation's relative links lead somewhere: every link of README.md, CONTRIBUTING.md and
 * docs/*.md to a file names one that exists, and every {@code #anchor} a heading of its page (as
 * GitHub makes anchors). Every docs page is reachable from the README, and no page speaks of how it
 * was written rather than of the product.
 */
class DocsLinksTest {
  private static final Pattern LINK = Pattern.compile("!?\\[(?:[^\\]\\[]|\\[[^\\]]*\\])*\\]\\(([^)\\s]+)\\)");
  private static final Pattern FENCED = Pattern.compile("(?ms)^```.*?^```$");
  private static final Pattern CODE_SPAN = Pattern.compile("`[^`\n]*`");
  private static final Pattern HEADING = Pattern.compile("(?m)^#{1,6} +(.+?) *#*$");

  static List<Path> pages() throws IOException {
    Path root = DocPage.root();
    List<Path> pages = new ArrayList<>(List.of(root.resolve("README.md")));
    if (Files.exists(root.resolve("CONTRIBUTING.md"))) {
      pages.add(root.resolve("CONTRIBUTING.md"));
    }
    try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
    }
    return pages;
  }

  /** Prose only: code blocks and code spans hold no links. */
  static String prose(Path page) throws IOException {
    String text = Files.readString(page, StandardCharsets.UTF_8);
    return CODE_SPAN.matcher(FENCED.matcher(text).replaceAll("")).replaceAll("``");
  }

  /** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens. */
  static Set<String> anchors(Path page) throws IOException {
    String text = FENCED.matcher(Files.readString(page, StandardCharsets.UTF_8)).replaceAll("");
    Set<String> anchors = new LinkedHashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    Matcher m = HEADING.matcher(text);
    while (m.find()) {
      String slug = slug(m.group(1));
      int n = seen.merge(slug, 1, Integer::sum);
      anchors.add(n == 1 ? slug : slug + "-" + (n - 1));
    }
    return anchors;
  }

  static String slug(String heading) {
    String plain = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1").strip().toLowerCase(Locale.ROOT);
    return plain.replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
  }

  @Test
  void slugsAreGitHubs() {
    assertThat(slug("Spring Boot: `@RateLimited` and the starter")).isEqualTo("spring-boot-ratelimited-and-the-starter");
    assertThat(slug("Memory bounds (in-memory backend)")).isEqualTo("memory-bounds-in-memory-backend");
    assertThat(slug("From a file (`web.xml`)")).isEqualTo("from-a-file-webxml");
  }

  @Test
  void everyRelativeLinkLeadsToAFileAndAHeading() throws IOException {
    Path root = DocPage.root();
    List<String> broken = new ArrayList<>();
    for (Path page : pages()) {
      Matcher m = LINK.matcher(prose(page));
      while (m.find()) {
        String target = m.group(1);
        if (target.matches("^[a-z][a-z0-9+.-]*:.*")) { // https:, mailto: ...: not ours to check
          continue;
        }
        int hash = target.indexOf('#');
        String file = hash < 0 ? target : target.substring(0, hash);
        Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
        String where = root.relativize(page) + ": (" + target + ")";
        if (!Files.exists(resolved)) {
          broken.add(where + " no such file");
        } else if (hash >= 0) {
          String anchor = target.substring(hash + 1);
          if (!resolved.toString().endsWith(".md") || !anchors(resolved).contains(anchor)) {
            broken.add(where + " no heading #" + anchor + " in " + root.relativize(resolved));
          }
        }
      }
    }
    assertThat(broken).as("broken relative links").isEmpty();
  }

  @Test
  void everyDocsPageIsReachableFromTheReadme() throws IOException {
    Path root = DocPage.root();
    Set<Path> reached = new LinkedHashSet<>();
    List<Path> todo = new ArrayList<>(List.of(root.resolve("README.md")));
    while (!todo.isEmpty()) {
      Path page = todo.remove(todo.size() - 1);
      if (!reached.add(page)) {
        continue;
      }
      Matcher m = LINK.matcher(prose(page));
      while (m.find()) {
        String file = m.group(1).replaceAll("#.*", "");
        if (file.endsWith(".md") && !file.matches("^[a-z]+:.*")) {
          Path target = page.getParent().resolve(file).normalize();
          if (Files.exists(target)) {
            todo.add(target);
          }
        }
      }
    }
    assertThat(reached).as("pages reached from README.md").containsAll(pages());
  }

  @Test
  void pagesDescribeTheProductNotHowItWasMade() throws IOException {
    Pattern history = Pattern.compile("(?i)session [0-9]+|this session|earlier host|a reviewer('s)? (found|caught)");
    for (Path page : pages()) {
      Matcher m = history.matcher(Files.readString(page, StandardCharsets.UTF_8));
      assertThat(m.find() ? m.group() : null).as(page.toString()).isNull();
    }
  }
}

package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import dev.ratelimit.tck.docs.DocPage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The properties reference of docs/spring-boot.md is the starter's configuration metadata (what
 * spring-boot-configuration-processor writes from the properties classes' javadoc), rendered as a
 * Markdown table: never written by hand. With {@code -Ddocs.regenerate=true} the test rewrites the
 * page's table instead of failing.
 */
class SpringBootPropertiesDocTest {
  static final String PAGE = "docs/spring-boot.md";
  static final String BEGIN = "<!-- properties:begin -->\n";
  static final String END = "<!-- properties:end -->";
  static final Path METADATA = Path.of("target/classes/META-INF/spring-configuration-metadata.json");

  /** The metadata's properties as a Markdown table, sorted by name. */
  static String table(String metadata) {
    List<Map<String, Object>> properties = JsonPath.read(metadata, "$.properties[*]");
    StringBuilder table = new StringBuilder("| property | type | default | description |\n|---|---|---|---|\n");
    properties.stream().sorted(Comparator.comparing(p -> (String) p.get("name"))).forEach(p -> table
        .append("| `").append(p.get("name")).append("` | ")
        .append(code(simpleType((String) p.get("type")))).append(" | ")
        .append(p.containsKey("defaultValue") ? code(String.valueOf(p.get("defaultValue"))) : "").append(" | ")
        .append(cell((String) p.getOrDefault("description", ""))).append(" |\n"));
    return table.toString();
  }

  /** {@code java.util.Map<java.lang.String,a.b.Outer$Inner>} as {@code Map<String, Inner>}. */
  static String simpleType(String type) {
    return type == null ? "" : type.replaceAll("[\\w.]+[.$](\\w+)", "$1").replace(",", ", ");
  }

  private static String code(String text) {
    return text.isEmpty() ? "" : "`" + text.replace("|", "\\|") + "`";
  }

  private static String cell(String text) {
    return text.replaceAll("\\s+", " ").replace("|", "\\|").strip();
  }

  @Test
  void rendersTypesAndCellsForMarkdown() {
    assertThat(simpleType("java.util.Map<java.lang.String,dev.ratelimit.spring.RateLimitProperties$PolicySpec>"))
        .isEqualTo("Map<String, PolicySpec>");
    assertThat(table("{\"properties\":[{\"name\":\"b.x\",\"type\":\"java.lang.Integer\",\"defaultValue\":5,"
        + "\"description\":\"One | two\\n three.\"},{\"name\":\"a.y\",\"type\":\"java.lang.String\"}]}"))
        .isEqualTo("| property | type | default | description |\n|---|---|---|---|\n"
            + "| `a.y` | `String` |  |  |\n| `b.x` | `Integer` | `5` | One \\| two three. |\n");
  }

  @Test
  void thePagesReferenceIsTheMetadata() throws IOException {
    assertThat(METADATA).as("the configuration processor's output: run the build (mvn verify)").exists();
    String expected = table(Files.readString(METADATA, StandardCharsets.UTF_8));
    assertThat(expected).contains("`ratelimit.failure-mode`", "`ratelimit.redis.url`", "`ratelimit.filter.rules`");
    Path page = DocPage.root().resolve(PAGE);
    String text = Files.readString(page, StandardCharsets.UTF_8);
    int begin = text.indexOf(BEGIN);
    int end = text.indexOf(END);
    assertThat(begin).as(PAGE + " holds " + BEGIN.strip() + " and " + END).isNotNegative();
    assertThat(end).isGreaterThan(begin);
    String current = text.substring(begin + BEGIN.length(), end);
    if (Boolean.getBoolean("docs.regenerate")) {
      Files.writeString(page, text.substring(0, begin + BEGIN.length()) + expected + text.substring(end),
          StandardCharsets.UTF_8);
      return;
    }
    assertThat(current).as(PAGE + "'s properties reference differs from the configuration metadata; regenerate it:"
        + " ./mvnw -B -pl ratelimit-spring-boot-starter -am verify -Dtest=SpringBootPropertiesDocTest"
        + " -Dsurefire.failIfNoSpecifiedTests=false -Ddocs.regenerate=true").isEqualTo(expected);
  }
}

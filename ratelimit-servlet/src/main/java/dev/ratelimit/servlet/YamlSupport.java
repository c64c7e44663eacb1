package dev.ratelimit.servlet;

import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * YAML config files, flattened to the property names of {@link RateLimitConfig}: maps join with
 * {@code .}, lists index with {@code [i]}. Only loaded when a YAML file is read, so SnakeYAML is
 * an optional dependency.
 */
final class YamlSupport {
  private YamlSupport() {}

  static boolean available() {
    try {
      Class.forName("org.yaml.snakeyaml.Yaml", false, YamlSupport.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /** The document's scalars by flattened name; a null scalar maps to null. */
  static Map<String, String> read(InputStream in, String source) {
    LoaderOptions options = new LoaderOptions();
    options.setAllowDuplicateKeys(false);
    options.setMaxAliasesForCollections(10);
    Yaml yaml = new Yaml(new SafeConstructor(options));
    Object document;
    try {
      document = yaml.load(new InputStreamReader(in, StandardCharsets.UTF_8));
    } catch (YAMLException e) {
      throw new IllegalArgumentException("rate-limit config " + source + " is not valid YAML: " + e.getMessage(), e);
    }
    Map<String, String> flat = new LinkedHashMap<>();
    if (document == null) {
      return flat;
    }
    if (!(document instanceof Map)) {
      throw new IllegalArgumentException("rate-limit config " + source + ": the YAML document must be a map "
          + "with the key 'ratelimit'");
    }
    flatten("", document, flat, source);
    return flat;
  }

  private static void flatten(String name, Object value, Map<String, String> out, String source) {
    if (value instanceof Map<?, ?> map) {
      for (Map.Entry<?, ?> e : map.entrySet()) {
        String key = String.valueOf(e.getKey());
        flatten(name.isEmpty() ? key : name + "." + key, e.getValue(), out, source);
      }
    } else if (value instanceof List<?> list) {
      for (int i = 0; i < list.size(); i++) {
        flatten(name + "[" + i + "]", list.get(i), out, source);
      }
    } else if (out.containsKey(name)) {
      // nested and dotted spellings of one property (ratelimit: {backend: x} and ratelimit.backend: y)
      throw new IllegalArgumentException("rate-limit config " + source + ": " + name + " is given twice"
          + " (nested and as a dotted key); give each property once");
    } else {
      out.put(name, value == null ? null : String.valueOf(value));
    }
  }
}

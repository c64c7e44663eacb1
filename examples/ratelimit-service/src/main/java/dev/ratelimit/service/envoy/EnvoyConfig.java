package dev.ratelimit.service.envoy;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Policy;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.nodes.Tag;
import org.yaml.snakeyaml.representer.Representer;
import org.yaml.snakeyaml.resolver.Resolver;

/**
 * Rate limit rules in envoyproxy/ratelimit's YAML format, one domain per file, and how a request's
 * descriptor finds its rule, as that service documents it: each entry of the descriptor descends
 * one level of nested {@code descriptors}, trying the entry's key and value, then a wildcard value
 * ({@code *} matches any run of characters), then the key alone; the rule is the {@code rate_limit}
 * of the level the last entry reaches. A descriptor that reaches no rule, and any descriptor of an
 * unknown domain, has no limit.
 *
 * <p>Every key of the reference format is read: {@code domain}, {@code descriptors}, {@code key},
 * {@code value}, {@code rate_limit} ({@code unit}, {@code requests_per_unit}, {@code unlimited},
 * {@code name}, {@code replaces}), {@code shadow_mode}, {@code share_threshold},
 * {@code detailed_metric}, {@code value_to_metric}, {@code quota_mode} and {@code metadata} (the
 * last four are accepted and change nothing here: metrics are per rule, see the docs). This
 * service adds, in {@code rate_limit}: {@code algorithm} (default FIXED_WINDOW, the reference's),
 * {@code window} (a duration such as {@code 90s}, instead of a unit) and {@code burst}. Any other
 * key is refused, as the reference refuses it. Immutable.
 */
final class EnvoyConfig {
  private static final Set<String> ROOT_KEYS = Set.of("domain", "descriptors");
  private static final Set<String> DESCRIPTOR_KEYS = Set.of("key", "value", "rate_limit", "descriptors", "shadow_mode",
      "quota_mode", "detailed_metric", "value_to_metric", "share_threshold", "metadata");
  private static final Set<String> RATE_LIMIT_KEYS = Set.of("unit", "requests_per_unit", "unlimited", "name",
      "replaces", "algorithm", "window", "burst");

  /**
   * Every plain scalar is text, as the reference's typed fields read them: {@code value: 02134} is
   * the text 02134 (YAML 1.1 would read an octal 1116), {@code value: 1.50} stays 1.50. Numbers and
   * booleans are parsed where a field needs one.
   */
  private static final class ScalarsAsText extends Resolver {
    @Override
    protected void addImplicitResolvers() {
      addImplicitResolver(Tag.NULL, NULL, "~nN\0");
      addImplicitResolver(Tag.NULL, EMPTY, null);
    }
  }

  /** A list of descriptors: one level of the tree. */
  private static final class Level {
    final Map<String, Node> byKeyAndValue = new HashMap<>();
    final Map<String, Node> byKey = new HashMap<>();
    final List<Node> wildcards = new ArrayList<>();
  }

  /** One configured descriptor. */
  private record Node(String key, String value, List<String> valueParts, boolean shareThreshold, Rule rule,
      Level children) {}

  /** The rule a request's descriptor matched, and the key its state is kept under. */
  record Match(Rule rule, String key) {}

  private final Map<String, Level> domains;

  private EnvoyConfig(Map<String, Level> domains) {
    this.domains = domains;
  }

  /** No domain: every descriptor has no limit. */
  static EnvoyConfig empty() {
    return new EnvoyConfig(Map.of());
  }

  /**
   * Reads one file per entry of {@code files} (source name to YAML text).
   *
   * @throws IllegalArgumentException naming the file, the descriptor and the fix, for anything the
   *     reference service refuses too (a missing key or unit, a duplicate descriptor, an unknown
   *     field, two files of one domain) and for a bad {@code algorithm}, {@code window} or {@code burst}
   */
  static EnvoyConfig parse(Map<String, String> files) {
    Map<String, Level> domains = new HashMap<>();
    Map<String, String> sources = new HashMap<>();
    Yaml yaml = new Yaml(new SafeConstructor(new LoaderOptions()), new Representer(new DumperOptions()),
        new DumperOptions(), new LoaderOptions(), new ScalarsAsText());
    files.forEach((source, text) -> {
      Object document;
      try {
        document = yaml.load(text);
      } catch (RuntimeException e) {
        throw new IllegalArgumentException(source + ": not YAML: " + e.getMessage(), e);
      }
      Map<String, Object> root = map(document, source, "the file");
      requireKnown(root, ROOT_KEYS, source, "the file");
      Object domainValue = root.get("domain");
      if (!(domainValue instanceof String domain) || domain.isEmpty()) {
        throw new IllegalArgumentException(source + ": 'domain' is required, a non-empty string naming the domain"
            + " that requests give (e.g. domain: edge_proxy_per_ip)");
      }
      if (sources.containsKey(domain)) {
        throw new IllegalArgumentException(source + ": domain '" + domain + "' is already configured by "
            + sources.get(domain) + ": one file per domain");
      }
      sources.put(domain, source);
      domains.put(domain, level(root.get("descriptors"), source, domain));
    });
    return new EnvoyConfig(Map.copyOf(domains));
  }

  /** The configured domains. */
  Set<String> domains() {
    return domains.keySet();
  }

  /** The rule of {@code descriptor} in {@code domain} and its state's key; null when it has no limit. */
  Match match(String domain, RateLimitDescriptor descriptor) {
    Level level = domains.get(domain);
    int entries = descriptor.getEntriesCount();
    if (level == null || entries == 0) {
      return null;
    }
    StringBuilder key = new StringBuilder(64);
    appendPart(key, domain);
    if (descriptor.hasLimit()) {
      return overridden(domain, descriptor, key);
    }
    for (int i = 0; i < entries; i++) {
      if (level == null) {
        return null; // more entries than nested levels: the reference matches no rule
      }
      RateLimitDescriptor.Entry entry = descriptor.getEntries(i);
      Node node = level.byKeyAndValue.get(pair(entry.getKey(), entry.getValue()));
      if (node == null) {
        for (Node wildcard : level.wildcards) {
          if (wildcard.key().equals(entry.getKey()) && wildcardMatch(wildcard.valueParts(), entry.getValue())) {
            node = wildcard;
            break;
          }
        }
      }
      if (node == null) {
        node = level.byKey.get(entry.getKey());
      }
      if (node == null) {
        return null;
      }
      key.append('|');
      appendPart(key, entry.getKey());
      key.append('=');
      // values sharing a wildcard's threshold share its state
      appendPart(key, node.shareThreshold() ? node.value() : entry.getValue());
      if (i == entries - 1) {
        return node.rule() == null ? null : new Match(node.rule(), key.toString());
      }
      level = node.children();
    }
    return null;
  }

  /**
   * A descriptor that carries its own limit (Envoy's {@code limit} override, set from dynamic
   * metadata) is limited by it, whatever the rules say, as in the reference service: a fixed window
   * of its unit, no shadow mode, under the key of all its entries; an unknown unit is no limit.
   */
  private static Match overridden(String domain, RateLimitDescriptor descriptor, StringBuilder key) {
    RateLimitDescriptor.RateLimitOverride limit = descriptor.getLimit();
    RateLimitResponse.RateLimit.Unit unit;
    try { // the override's enum (envoy.type.v3.RateLimitUnit) and the answer's share names
      unit = RateLimitResponse.RateLimit.Unit.valueOf(limit.getUnit().name());
    } catch (IllegalArgumentException e) {
      return null;
    }
    if (unit == RateLimitResponse.RateLimit.Unit.UNKNOWN || unit == RateLimitResponse.RateLimit.Unit.UNRECOGNIZED) {
      return null;
    }
    long perUnit = Integer.toUnsignedLong(limit.getRequestsPerUnit());
    // one policy per (unit, limit): a bounded set, as overrides come from Envoy's configuration
    String path = domain + ".override." + perUnit + "-per-" + unit.name().toLowerCase(Locale.ROOT);
    Policy policy = perUnit == 0 ? null
        : Policy.of(perUnit, Duration.ofSeconds(seconds(unit)), Algorithm.FIXED_WINDOW).withName(path);
    for (RateLimitDescriptor.Entry entry : descriptor.getEntriesList()) {
      key.append('|');
      appendPart(key, entry.getKey());
      key.append('=');
      appendPart(key, entry.getValue());
    }
    key.append("|override");
    return new Match(new Rule(path, "", Set.of(), policy, perUnit, unit, false, false), key.toString());
  }

  /** Escapes the separators, so that distinct descriptors never share a key. */
  private static void appendPart(StringBuilder key, String part) {
    for (int i = 0; i < part.length(); i++) {
      char c = part.charAt(i);
      if (c == '\\' || c == '|' || c == '=') {
        key.append('\\');
      }
      key.append(c);
    }
  }

  private static String pair(String key, String value) {
    return key + '\u0000' + value;
  }

  /** Whether {@code value} matches the pattern split at its {@code *}s: each matches any run of characters. */
  static boolean wildcardMatch(List<String> parts, String value) {
    String first = parts.get(0);
    String last = parts.get(parts.size() - 1);
    if (!value.startsWith(first) || value.length() < first.length() + last.length() || !value.endsWith(last)) {
      return false;
    }
    int at = first.length();
    int end = value.length() - last.length();
    for (int i = 1; i < parts.size() - 1; i++) {
      int found = value.indexOf(parts.get(i), at);
      if (found < 0 || found + parts.get(i).length() > end) {
        return false;
      }
      at = found + parts.get(i).length();
    }
    return true;
  }

  private static Level level(Object descriptors, String source, String parentPath) {
    Level level = new Level();
    if (descriptors == null) {
      return level;
    }
    if (!(descriptors instanceof List<?> list)) {
      throw new IllegalArgumentException(source + ": " + parentPath + ": 'descriptors' must be a list");
    }
    for (Object item : list) {
      Map<String, Object> descriptor = map(item, source, "a descriptor under " + parentPath);
      requireKnown(descriptor, DESCRIPTOR_KEYS, source, "a descriptor under " + parentPath);
      String key = string(descriptor.get("key"), source, parentPath, "key");
      if (key == null || key.isEmpty()) {
        throw new IllegalArgumentException(source + ": a descriptor under " + parentPath + " has no 'key': every"
            + " descriptor needs one (value is optional)");
      }
      String value = string(descriptor.get("value"), source, parentPath + "." + key, "value");
      boolean hasValue = value != null && !value.isEmpty();
      String path = parentPath + "." + key + (hasValue ? "_" + value : "");
      boolean shareThreshold = flag(descriptor, "share_threshold", source, path);
      boolean wildcard = hasValue && value.contains("*");
      if (shareThreshold && !wildcard) {
        throw new IllegalArgumentException(source + ": " + path + ": share_threshold needs a wildcard value"
            + " (containing '*'), e.g. value: files/*");
      }
      Rule rule = descriptor.get("rate_limit") == null ? null
          : rule(descriptor.get("rate_limit"), flag(descriptor, "shadow_mode", source, path), source, path);
      for (String ignored : List.of("quota_mode", "detailed_metric", "value_to_metric")) {
        flag(descriptor, ignored, source, path); // read for its type only
      }
      Node node = new Node(key, hasValue ? value : null, wildcard ? List.of(value.split("\\*", -1)) : null,
          shareThreshold, rule, level(descriptor.get("descriptors"), source, path));
      Node earlier = hasValue ? level.byKeyAndValue.putIfAbsent(pair(key, value), node)
          : level.byKey.putIfAbsent(key, node);
      if (earlier != null) {
        throw new IllegalArgumentException(source + ": duplicate descriptor " + path + ": each key (and value) once"
            + " per level");
      }
      if (wildcard) {
        level.wildcards.add(node);
      }
    }
    return level;
  }

  private static Rule rule(Object block, boolean shadow, String source, String path) {
    String where = path + ".rate_limit";
    Map<String, Object> rateLimit = map(block, source, where);
    requireKnown(rateLimit, RATE_LIMIT_KEYS, source, where);
    boolean unlimited = flag(rateLimit, "unlimited", source, where);
    String unitText = string(rateLimit.get("unit"), source, where, "unit");
    String name = string(rateLimit.get("name"), source, where, "name");
    name = name == null ? "" : name;
    Set<String> replaces = new LinkedHashSet<>();
    if (rateLimit.get("replaces") != null) {
      if (!(rateLimit.get("replaces") instanceof List<?> list)) {
        throw new IllegalArgumentException(source + ": " + where + ".replaces must be a list of {name: ...}");
      }
      for (Object item : list) {
        Map<String, Object> replaced = map(item, source, where + ".replaces");
        String replacedName = string(replaced.get("name"), source, where + ".replaces", "name");
        if (replacedName == null || replacedName.isEmpty()) {
          throw new IllegalArgumentException(source + ": " + where + ".replaces has an entry without a name");
        }
        if (replacedName.equals(name)) {
          throw new IllegalArgumentException(source + ": " + where + ".replaces names the rule itself ('" + name + "')");
        }
        replaces.add(replacedName);
      }
    }
    if (unlimited) {
      if (unitText != null || rateLimit.get("requests_per_unit") != null || rateLimit.get("window") != null) {
        throw new IllegalArgumentException(source + ": " + where + ": an unlimited rule takes no unit,"
            + " requests_per_unit or window");
      }
      return new Rule(path, name, Set.copyOf(replaces), null, 0, RateLimitResponse.RateLimit.Unit.UNKNOWN, true,
          shadow);
    }
    String windowText = string(rateLimit.get("window"), source, where, "window");
    RateLimitResponse.RateLimit.Unit unit = RateLimitResponse.RateLimit.Unit.UNKNOWN;
    Duration window;
    if (unitText != null) {
      unit = unit(unitText, source, where);
    }
    if (windowText != null) {
      try {
        window = Policy.parseWindow(windowText.trim());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(source + ": " + where + ".window: " + e.getMessage(), e);
      }
    } else if (unitText != null) {
      window = Duration.ofSeconds(seconds(unit));
    } else {
      throw new IllegalArgumentException(source + ": " + where + ": 'unit' is required (second, minute, hour, day,"
          + " week, month or year), or this service's 'window' (e.g. 90s), or unlimited: true");
    }
    Object perUnit = rateLimit.get("requests_per_unit");
    long limit = whole(perUnit);
    if (limit < 0 || limit > 0xFFFF_FFFFL) {
      throw new IllegalArgumentException(source + ": " + where + ".requests_per_unit is required: a whole number"
          + " from 0 (refuses every request) to 4294967295, got " + perUnit);
    }
    Algorithm algorithm = Algorithm.FIXED_WINDOW;
    String algorithmText = string(rateLimit.get("algorithm"), source, where, "algorithm");
    if (algorithmText != null) {
      try {
        algorithm = Algorithm.valueOf(algorithmText.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(source + ": " + where + ".algorithm: unknown '" + algorithmText
            + "', one of " + List.of(Algorithm.values()), e);
      }
    }
    Object burst = rateLimit.get("burst");
    if (burst != null && whole(burst) < 1) {
      throw new IllegalArgumentException(source + ": " + where + ".burst must be a whole number of at least 1, got "
          + burst);
    }
    Policy policy = null;
    if (limit > 0) {
      try {
        policy = Policy.of(limit, window, algorithm).withName(path);
        if (burst != null) {
          policy = policy.withBurst(whole(burst));
        }
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(source + ": " + where + ": " + e.getMessage(), e);
      }
    }
    return new Rule(path, name, Set.copyOf(replaces), policy, limit, unit, false, shadow);
  }

  private static RateLimitResponse.RateLimit.Unit unit(String text, String source, String where) {
    try {
      RateLimitResponse.RateLimit.Unit unit = RateLimitResponse.RateLimit.Unit.valueOf(text.toUpperCase(Locale.ROOT));
      if (unit != RateLimitResponse.RateLimit.Unit.UNKNOWN && unit != RateLimitResponse.RateLimit.Unit.UNRECOGNIZED) {
        return unit;
      }
    } catch (IllegalArgumentException e) {
      // named below
    }
    throw new IllegalArgumentException(source + ": " + where + ".unit: invalid '" + text + "', one of second, minute,"
        + " hour, day, week, month, year");
  }

  /** The reference service's unit lengths: a month is 30 days, a year 365. */
  static long seconds(RateLimitResponse.RateLimit.Unit unit) {
    return switch (unit) {
      case SECOND -> 1;
      case MINUTE -> 60;
      case HOUR -> 3_600;
      case DAY -> 86_400;
      case WEEK -> 7 * 86_400;
      case MONTH -> 30 * 86_400;
      case YEAR -> 365 * 86_400;
      default -> throw new IllegalArgumentException("no length: " + unit);
    };
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object value, String source, String what) {
    if (value instanceof Map<?, ?> map) {
      for (Object key : map.keySet()) {
        if (!(key instanceof String)) {
          throw new IllegalArgumentException(source + ": " + what + ": key " + key + " is not a string");
        }
      }
      return (Map<String, Object>) map;
    }
    throw new IllegalArgumentException(source + ": " + what + " must be a mapping, got "
        + (value == null ? "nothing" : value.getClass().getSimpleName()));
  }

  private static void requireKnown(Map<String, Object> map, Set<String> known, String source, String what) {
    for (String key : map.keySet()) {
      if (!known.contains(key)) {
        List<String> sorted = new ArrayList<>(known);
        Collections.sort(sorted);
        throw new IllegalArgumentException(source + ": " + what + ": unknown field '" + key + "'; known: " + sorted);
      }
    }
  }

  private static String string(Object value, String source, String where, String field) {
    if (value == null || value instanceof String) {
      return (String) value;
    }
    throw new IllegalArgumentException(source + ": " + where + "." + field + " must be a string");
  }

  /** A whole number written in decimal; -1 when {@code value} is not one. */
  private static long whole(Object value) {
    if (value instanceof String text && text.matches("\\+?[0-9]{1,18}")) {
      return Long.parseLong(text);
    }
    return -1;
  }

  /** A YAML 1.1 boolean, as the reference's YAML reader takes it. */
  private static boolean flag(Map<String, Object> map, String field, String source, String where) {
    Object value = map.get(field);
    if (value == null) {
      return false;
    }
    switch (value instanceof String text ? text : "") {
      case "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y":
        return true;
      case "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", "n", "N":
        return false;
      default:
        throw new IllegalArgumentException(source + ": " + where + "." + field + " must be true or false, got "
            + value);
    }
  }
}

package dev.ratelimit.servlet;

import dev.ratelimit.http.DeniedResponse;
import dev.ratelimit.http.HeaderOptions;
import dev.ratelimit.http.MissingKey;
import dev.ratelimit.http.PolicyNames;
import dev.ratelimit.http.RateLimitRule;
import dev.ratelimit.Algorithm;
import dev.ratelimit.FailureMode;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Turns a configuration file's flat properties into a {@link RateLimitConfig}, naming the property
 * of each error.
 */
final class ConfigParser {
  private static final String INDEX = "(0|[1-9][0-9]{0,4})";
  /** A denied response's properties, after {@code denied-response.}: a header's name is any token. */
  private static final String DENIED = "denied-response\\.(?:status|content-type|body"
      + "|headers\\.[!#$%&'*+^_`|~0-9A-Za-z.-]+)";
  private static final Pattern TOP = Pattern.compile("ratelimit\\.(backend|failure-mode|timeout|match|missing-key"
      + "|headers\\.draft|headers\\.legacy|redis\\.url|redis\\.key-prefix|redis\\.timeout|" + DENIED
      + "|trusted-proxies(?:\\[" + INDEX + "\\])?)");
  private static final Pattern RULE = Pattern.compile("ratelimit\\.rules\\[" + INDEX + "\\]\\."
      + "(name|key|cost|when|skip-when|count-when|cost-after|" + DENIED + "|paths(?:\\[" + INDEX + "\\])?|methods(?:\\[" + INDEX + "\\])?)");
  private static final Pattern POLICY = Pattern.compile("ratelimit\\.rules\\[" + INDEX + "\\]\\.policies\\["
      + INDEX + "\\]\\.(name|limit|algorithm|burst)");
  private static final Pattern DURATION = Pattern.compile("\\s*([0-9]{1,9})\\s*(ms|s)\\s*");
  private static final String KNOWN = "ratelimit.backend, ratelimit.failure-mode, ratelimit.timeout, ratelimit.match, "
      + "ratelimit.missing-key, ratelimit.headers.draft, ratelimit.headers.legacy, ratelimit.trusted-proxies, "
      + "ratelimit.redis.url, ratelimit.redis.key-prefix, ratelimit.redis.timeout, "
      + "ratelimit.denied-response.status|content-type|body|headers.NAME, "
      + "ratelimit.rules[i].name|paths|methods|key|cost|when|skip-when|count-when|cost-after, ratelimit.rules[i].denied-response.*, "
      + "ratelimit.rules[i].policies[j].name|limit|algorithm|burst";

  final String source;
  final Map<String, String> properties;
  final List<RateLimitRule> rules = new ArrayList<>();
  boolean matchAll;
  HeaderOptions headers = HeaderOptions.DEFAULT;
  List<String> trustedProxies = List.of();
  MissingKey missingKey = MissingKey.SHARED_BUCKET;
  DeniedResponse deniedResponse = DeniedResponse.PROBLEM_JSON;
  FailureMode failureMode = FailureMode.FAIL_OPEN;
  String backend = "memory";
  String redisUrl;
  String redisKeyPrefix = "rl";
  Duration redisTimeout = Duration.ofMillis(200);
  Duration timeout = RateLimiter.Builder.DEFAULT_TIMEOUT;

  private final Map<String, String> top = new TreeMap<>();
  private final TreeMap<Integer, Map<String, String>> ruleProps = new TreeMap<>();
  private final TreeMap<Integer, TreeMap<Integer, Map<String, String>>> policyProps = new TreeMap<>();

  ConfigParser(Map<String, String> properties, String source) {
    this.properties = Objects.requireNonNull(properties, "properties");
    this.source = source;
  }

  ConfigParser parse() {
    for (String name : new java.util.TreeSet<>(properties.keySet())) {
      classify(name);
    }
    for (Map.Entry<String, String> e : properties.entrySet()) {
      if (e.getValue() == null) {
        throw fail(e.getKey(), "has no value (in YAML, quote a value that starts with '#', such as \"#clientIp\")");
      }
    }
    parseTop();
    parseRules();
    return this;
  }

  private void classify(String name) {
    Matcher m = TOP.matcher(name);
    if (m.matches()) {
      top.put(name, properties.get(name));
      return;
    }
    m = POLICY.matcher(name);
    if (m.matches()) {
      policyProps.computeIfAbsent(Integer.parseInt(m.group(1)), i -> new TreeMap<>())
          .computeIfAbsent(Integer.parseInt(m.group(2)), i -> new HashMap<>())
          .put(m.group(3), properties.get(name));
      return;
    }
    m = RULE.matcher(name);
    if (m.matches()) {
      ruleProps.computeIfAbsent(Integer.parseInt(m.group(1)), i -> new HashMap<>())
          .put(m.group(2), properties.get(name));
      return;
    }
    throw fail(name, "unknown property" + (name.startsWith("ratelimit.") ? "" : " (every key starts with 'ratelimit.')")
        + "; the properties are " + KNOWN);
  }

  /** The duration {@code name} holds, or {@code otherwise} when it is not set. */
  private Duration duration(String name, Duration otherwise) {
    String value = top.get(name);
    if (value == null) {
      return otherwise;
    }
    Matcher m = DURATION.matcher(value);
    if (!m.matches() || Long.parseLong(m.group(1)) == 0) {
      throw fail(name, "'" + value + "' is not a positive duration such as 200ms or 1s");
    }
    long amount = Long.parseLong(m.group(1));
    return m.group(2).equals("ms") ? Duration.ofMillis(amount) : Duration.ofSeconds(amount);
  }

  private void parseTop() {
    backend = oneOf("ratelimit.backend", top.get("ratelimit.backend"), backend, "memory", "redis");
    for (String name : top.keySet()) {
      if (name.startsWith("ratelimit.redis.") && !backend.equals("redis")) {
        throw fail(name, "is set but ratelimit.backend is " + backend + "; set ratelimit.backend=redis "
            + "to keep the limits in Redis");
      }
    }
    if (backend.equals("redis")) {
      if (!RedisSupport.available()) {
        throw fail("ratelimit.backend", "redis needs dev.ratelimit:ratelimit-redis (and Redisson) on the classpath");
      }
      redisUrl = required("ratelimit.redis.url", top.get("ratelimit.redis.url"), "e.g. redis://127.0.0.1:6379");
      checkRedisUrl(redisUrl);
      String prefix = top.get("ratelimit.redis.key-prefix");
      if (prefix != null) {
        redisKeyPrefix = prefix.trim();
        if (redisKeyPrefix.isEmpty() || !redisKeyPrefix.chars().allMatch(c -> c > 0x20 && c < 0x7f
            && "%{}:#".indexOf(c) < 0)) {
          throw fail("ratelimit.redis.key-prefix", "'" + prefix + "' must be non-empty printable ASCII "
              + "without % { } : # or white space");
        }
      }
      redisTimeout = duration("ratelimit.redis.timeout", redisTimeout);
    }
    timeout = duration("ratelimit.timeout", timeout);
    if (backend.equals("redis") && redisTimeout.compareTo(timeout) > 0) {
      if (!top.containsKey("ratelimit.redis.timeout")) {
        redisTimeout = timeout; // the default, shortened to the limiter's wait
      } else { // Redisson would still wait for checks the limiter has given up on
        throw fail("ratelimit.redis.timeout", "'" + top.get("ratelimit.redis.timeout") + "' is longer than "
            + "ratelimit.timeout (" + timeout.toMillis() + " ms): Redisson would still wait for checks the "
            + "limiter has given up on; set ratelimit.timeout at least as long");
      }
    }
    String mode = top.get("ratelimit.failure-mode");
    if (mode != null) {
      failureMode = enumValue("ratelimit.failure-mode", mode, FailureMode.class);
    }
    matchAll = oneOf("ratelimit.match", top.get("ratelimit.match"), "first", "first", "all").equals("all");
    headers = new HeaderOptions(
        bool("ratelimit.headers.draft", top.get("ratelimit.headers.draft"), HeaderOptions.DEFAULT.draft()),
        bool("ratelimit.headers.legacy", top.get("ratelimit.headers.legacy"), HeaderOptions.DEFAULT.legacy()));
    String missing = top.get("ratelimit.missing-key");
    if (missing != null) {
      missingKey = enumValue("ratelimit.missing-key", missing, MissingKey.class);
    }
    List<Map.Entry<String, String>> proxies = list("ratelimit.trusted-proxies", top);
    List<String> cidrs = new ArrayList<>();
    for (Map.Entry<String, String> proxy : proxies) {
      try {
        new ClientIp(List.of(proxy.getValue()));
      } catch (IllegalArgumentException e) {
        throw fail(proxy.getKey(), e.getMessage());
      }
      cidrs.add(proxy.getValue());
    }
    trustedProxies = cidrs;
    DeniedResponse configured = deniedResponse("ratelimit.denied-response", relative(top, "ratelimit.denied-response."),
        DeniedResponse.PROBLEM_JSON);
    if (configured != null) {
      deniedResponse = configured;
    }
  }

  /** The entries of {@code props} whose keys start with {@code prefix}, under the rest of their keys. */
  private static Map<String, String> relative(Map<String, String> props, String prefix) {
    Map<String, String> out = new LinkedHashMap<>();
    props.forEach((k, v) -> {
      if (k.startsWith(prefix)) {
        out.put(k.substring(prefix.length()), v);
      }
    });
    return out;
  }

  /**
   * The response {@code props} (status, content-type, body, headers.NAME) make over {@code base},
   * each bad value failing with its property's name; null when {@code props} is empty.
   */
  private DeniedResponse deniedResponse(String prefix, Map<String, String> props, DeniedResponse base) {
    if (props.isEmpty()) {
      return null;
    }
    DeniedResponse.Builder b = DeniedResponse.builder(base);
    String status = props.get("status");
    if (status != null) {
      int code;
      try {
        code = Integer.parseInt(status.trim());
      } catch (NumberFormatException e) {
        throw fail(prefix + ".status", "'" + status + "' is not a status code such as 429 or 503");
      }
      set(prefix + ".status", () -> b.status(code));
    }
    String contentType = props.get("content-type");
    if (contentType != null) {
      set(prefix + ".content-type", () -> b.contentType(contentType));
    }
    String body = props.get("body");
    if (body != null) {
      set(prefix + ".body", () -> b.body(body));
    }
    props.forEach((key, value) -> {
      if (key.startsWith("headers.")) {
        set(prefix + "." + key, () -> b.header(key.substring("headers.".length()), value));
      }
    });
    try {
      return b.build();
    } catch (IllegalArgumentException e) {
      throw fail(prefix + ".content-type", e.getMessage());
    }
  }

  /** Runs a builder method, naming {@code property} in what it refuses. */
  private static void set(String property, Runnable setter) {
    try {
      setter.run();
    } catch (IllegalArgumentException e) {
      throw fail(property, e.getMessage());
    }
  }

  private void parseRules() {
    for (Integer index : policyProps.keySet()) {
      if (!ruleProps.containsKey(index)) {
        throw fail("ratelimit.rules[" + index + "].name", "is required");
      }
    }
    if (ruleProps.isEmpty()) {
      throw fail("ratelimit.rules", "at least one rule is required, e.g. ratelimit.rules[0].name=api, "
          + "ratelimit.rules[0].paths=/api/**, ratelimit.rules[0].policies[0].limit=100/1m");
    }
    contiguous("ratelimit.rules", ruleProps.keySet());
    Map<String, String> ruleNames = new HashMap<>();
    Map<String, String> policyNames = new HashMap<>();
    for (Map.Entry<Integer, Map<String, String>> entry : ruleProps.entrySet()) {
      String prefix = "ratelimit.rules[" + entry.getKey() + "]";
      RateLimitRule rule = rule(prefix, entry.getValue(), policyProps.getOrDefault(entry.getKey(), new TreeMap<>()));
      String other = ruleNames.putIfAbsent(rule.name(), prefix);
      if (other != null) {
        throw fail(prefix + ".name", "rule name '" + rule.name() + "' is also the name of " + other
            + "; rules need distinct names, which namespace their keys");
      }
      if (matchAll) {
        for (int j = 0; j < rule.policies().size(); j++) {
          String name = rule.policies().get(j).name();
          String owner = policyNames.putIfAbsent(name, prefix);
          if (owner != null) {
            throw fail(prefix + ".policies[" + j + "].name", "policy name '" + name + "' is also used by " + owner
                + "; with ratelimit.match=all, policy names must be distinct across rules");
          }
        }
      }
      rules.add(rule);
    }
  }

  private RateLimitRule rule(String prefix, Map<String, String> props, TreeMap<Integer, Map<String, String>> policies) {
    String name = required(prefix + ".name", props.get("name"), "e.g. api").trim();
    RateLimitRule.Builder builder = RateLimitRule.builder(name);
    try {
      dev.ratelimit.internal.http.RuleChecks.ruleName(name);
    } catch (IllegalArgumentException e) {
      throw fail(prefix + ".name", e.getMessage());
    }
    List<Map.Entry<String, String>> paths = list(prefix + ".paths", prefixed(props, "paths", prefix));
    if (paths.isEmpty()) {
      throw fail(prefix + ".paths", "is required, e.g. /api/** (or /** for every path)");
    }
    for (Map.Entry<String, String> path : paths) {
      try {
        dev.ratelimit.internal.http.CompiledRule.parsePattern(name, path.getValue());
      } catch (IllegalArgumentException e) {
        throw fail(path.getKey(), e.getMessage());
      }
      builder.path(path.getValue());
    }
    for (Map.Entry<String, String> method : list(prefix + ".methods", prefixed(props, "methods", prefix))) {
      try {
        dev.ratelimit.internal.http.RuleChecks.method(name, method.getValue());
      } catch (IllegalArgumentException e) {
        throw fail(method.getKey(), e.getMessage());
      }
      builder.method(method.getValue());
    }
    for (String part : List.of("key", "cost")) {
      String text = props.get(part);
      if (text != null) {
        try {
          Expressions.parse(text, "rule '" + name + "': " + part);
        } catch (IllegalArgumentException e) {
          throw fail(prefix + "." + part, e.getMessage());
        }
        if (part.equals("key")) {
          builder.key(text);
        } else {
          builder.cost(text);
        }
      }
    }
    for (String part : List.of("when", "skip-when", "count-when")) {
      String text = props.get(part);
      if (text == null) {
        continue;
      }
      try {
        Expressions.condition(text, "rule '" + name + "': " + part,
            part.equals("count-when") ? Expressions.COUNT_VARIABLES : Expressions.VARIABLES);
      } catch (IllegalArgumentException e) {
        throw fail(prefix + "." + part, e.getMessage());
      }
      switch (part) {
        case "when" -> builder.when(text);
        case "skip-when" -> builder.skipWhen(text);
        default -> builder.countWhen(text);
      }
    }
    String costAfter = props.get("cost-after");
    if (costAfter != null) {
      try {
        Expressions.parseAfter(costAfter, "rule '" + name + "': cost-after");
      } catch (IllegalArgumentException e) {
        throw fail(prefix + ".cost-after", e.getMessage());
      }
      builder.costAfter(costAfter);
    }
    DeniedResponse response = deniedResponse(prefix + ".denied-response", relative(props, "denied-response."),
        deniedResponse);
    if (response != null) {
      builder.deniedResponse(response);
    }
    if (policies.isEmpty()) {
      throw fail(prefix + ".policies", "at least one policy is required, e.g. " + prefix
          + ".policies[0].limit=100/1m");
    }
    contiguous(prefix + ".policies", policies.keySet());
    Map<String, String> seen = new HashMap<>();
    for (Map.Entry<Integer, Map<String, String>> p : policies.entrySet()) {
      String policyPrefix = prefix + ".policies[" + p.getKey() + "]";
      Policy policy = policy(policyPrefix, p.getValue());
      String other = seen.putIfAbsent(policy.name(), policyPrefix);
      if (other != null) {
        throw fail(policyPrefix + ".name", "policy name '" + policy.name() + "' is also the name of " + other
            + "; each policy of a rule needs its own name");
      }
      builder.policy(policy);
    }
    try {
      return builder.build();
    } catch (IllegalArgumentException e) {
      throw fail(prefix, e.getMessage());
    }
  }

  private Policy policy(String prefix, Map<String, String> props) {
    String spec = required(prefix + ".limit", props.get("limit"), "e.g. 100/1m");
    Algorithm algorithm = props.get("algorithm") == null ? null
        : enumValue(prefix + ".algorithm", props.get("algorithm"), Algorithm.class);
    Policy policy;
    try {
      policy = spec(spec.trim(), algorithm);
    } catch (IllegalArgumentException e) {
      throw fail(prefix + ".limit", e.getMessage());
    }
    String burst = props.get("burst");
    if (burst != null) {
      if (!policy.algorithm().usesBurst()) {
        throw fail(prefix + ".burst", "applies only to TOKEN_BUCKET, GCRA and LEAKY_BUCKET, not "
            + policy.algorithm());
      }
      long b;
      try {
        b = Long.parseLong(burst.trim());
      } catch (NumberFormatException e) {
        throw fail(prefix + ".burst", "'" + burst + "' is not a whole number");
      }
      try {
        policy = policy.withBurst(b);
      } catch (IllegalArgumentException e) {
        throw fail(prefix + ".burst", e.getMessage());
      }
    }
    String name = props.get("name");
    if (name != null) {
      if (name.isBlank()) {
        throw fail(prefix + ".name", "must not be blank");
      }
      try {
        PolicyNames.requireFitsHeader(name.trim(), prefix);
      } catch (IllegalArgumentException e) {
        throw fail(prefix + ".name", e.getMessage());
      }
      policy = policy.withName(name.trim());
    }
    return policy;
  }

  /**
   * A policy of {@code spec} with {@code algorithm}. {@link Policy#parse} builds a GCRA policy
   * first, which refuses numbers that only the window algorithms can compute exactly (a large
   * limit per day); for those the spec is taken apart and built with the algorithm directly.
   */
  private static Policy spec(String spec, Algorithm algorithm) {
    Policy parsed;
    try {
      parsed = Policy.parse(spec);
    } catch (IllegalArgumentException e) {
      int slash = spec.indexOf('/');
      if (algorithm == null || algorithm == Algorithm.GCRA || slash < 0) {
        throw e;
      }
      long limit;
      Duration window;
      try {
        limit = Long.parseLong(spec.substring(0, slash).trim());
        window = Policy.parse("1/" + spec.substring(slash + 1).trim()).window();
      } catch (RuntimeException other) {
        throw e;
      }
      return Policy.of(limit, window, algorithm);
    }
    return algorithm == null ? parsed : Policy.of(parsed.limit(), parsed.window(), algorithm);
  }

  /** The entries of a list property: {@code name=a,b} or {@code name[0]=a}, {@code name[1]=b}. */
  private List<Map.Entry<String, String>> list(String name, Map<String, String> props) {
    String plain = props.get(name);
    TreeMap<Integer, String> indexed = new TreeMap<>();
    for (Map.Entry<String, String> e : props.entrySet()) {
      if (e.getKey().startsWith(name + "[")) {
        indexed.put(Integer.parseInt(e.getKey().substring(name.length() + 1, e.getKey().length() - 1)), e.getValue());
      }
    }
    List<Map.Entry<String, String>> out = new ArrayList<>();
    if (plain != null && !indexed.isEmpty()) {
      throw fail(name, "is given both as a list and as " + name + "[" + indexed.firstKey() + "]; use one form");
    }
    if (plain != null) {
      if (plain.isBlank()) {
        return out;
      }
      for (String item : plain.split(",", -1)) {
        if (item.isBlank()) {
          throw fail(name, "has an empty entry in '" + plain + "'");
        }
        out.add(Map.entry(name, item.trim()));
      }
      return out;
    }
    contiguous(name, indexed.keySet());
    for (Map.Entry<Integer, String> e : indexed.entrySet()) {
      String key = name + "[" + e.getKey() + "]";
      if (e.getValue().isBlank()) {
        throw fail(key, "must not be blank");
      }
      out.add(Map.entry(key, e.getValue().trim()));
    }
    return out;
  }

  /** The rule's properties {@code paths}, {@code paths[0]}, ... under their full names. */
  private static Map<String, String> prefixed(Map<String, String> props, String part, String prefix) {
    Map<String, String> out = new HashMap<>();
    for (Map.Entry<String, String> e : props.entrySet()) {
      if (e.getKey().equals(part) || e.getKey().startsWith(part + "[")) {
        out.put(prefix + "." + e.getKey(), e.getValue());
      }
    }
    return out;
  }

  private void contiguous(String name, java.util.Set<Integer> indices) {
    int expected = 0;
    for (int index : new java.util.TreeSet<>(indices)) {
      if (index != expected) {
        throw fail(name + "[" + expected + "]", "is missing: entries are numbered from 0 without gaps");
      }
      expected++;
    }
  }

  private String required(String name, String value, String example) {
    if (value == null || value.isBlank()) {
      throw fail(name, "is required, " + example);
    }
    return value;
  }

  private String oneOf(String name, String value, String fallback, String... allowed) {
    if (value == null) {
      return fallback;
    }
    String v = value.trim().toLowerCase(Locale.ROOT);
    if (!Arrays.asList(allowed).contains(v)) {
      throw fail(name, "'" + value + "' is not one of " + String.join(", ", allowed));
    }
    return v;
  }

  private boolean bool(String name, String value, boolean fallback) {
    if (value == null) {
      return fallback;
    }
    return oneOf(name, value, null, "true", "false").equals("true");
  }

  private <E extends Enum<E>> E enumValue(String name, String value, Class<E> type) {
    String v = value.trim().toUpperCase(Locale.ROOT).replace('-', '_');
    for (E e : type.getEnumConstants()) {
      if (e.name().equals(v)) {
        return e;
      }
    }
    throw fail(name, "'" + value + "' is not one of " + Arrays.stream(type.getEnumConstants())
        .map(e -> type == MissingKey.class ? e.name().toLowerCase(Locale.ROOT).replace('_', '-') : e.name())
        .collect(Collectors.joining(", ")));
  }

  /** Only with ratelimit-redis on the classpath: {@code RedisUrl} reads the URL as the starter does. */
  private void checkRedisUrl(String url) {
    try {
      RedisSupport.checkUrl(url);
    } catch (IllegalArgumentException e) {
      throw fail("ratelimit.redis.url", e.getMessage());
    }
  }

  private static IllegalArgumentException fail(String property, String message) {
    return new IllegalArgumentException(property + ": " + message);
  }
}

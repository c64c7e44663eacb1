package dev.ratelimit.servlet;

import dev.ratelimit.http.DeniedResponse;
import dev.ratelimit.http.HeaderOptions;
import dev.ratelimit.http.MissingKey;
import dev.ratelimit.http.RateLimitRule;
import dev.ratelimit.FailureMode;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.spi.Backend;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.function.UnaryOperator;

/**
 * A filter's configuration read from a file: what {@link RateLimitFilter#RateLimitFilter()} reads
 * from its init-param {@value RateLimitFilter#CONFIG_PARAM}, a {@code .properties} or YAML file.
 *
 * <p>The file format's reference, every property with its values and default, is the
 * documentation's servlet filter page ({@code docs/servlet-filter.md}, "File format reference"),
 * whose examples the tests load. Every key must be one of those: a typo is an error, never a limit
 * silently not applied; so is any bad value, with a message naming the property.
 */
public final class RateLimitConfig {
  private final String source;
  private final List<RateLimitRule> rules;
  private final boolean matchAll;
  private final HeaderOptions headers;
  private final List<String> trustedProxies;
  private final MissingKey missingKey;
  private final DeniedResponse deniedResponse;
  private final FailureMode failureMode;
  private final String backend;
  private final String redisUrl;
  private final String redisKeyPrefix;
  private final Duration redisTimeout;
  private final Duration timeout;

  RateLimitConfig(ConfigParser p) {
    this.source = p.source;
    this.rules = List.copyOf(p.rules);
    this.matchAll = p.matchAll;
    this.headers = p.headers;
    this.trustedProxies = List.copyOf(p.trustedProxies);
    this.missingKey = p.missingKey;
    this.deniedResponse = p.deniedResponse;
    this.failureMode = p.failureMode;
    this.backend = p.backend;
    this.redisUrl = p.redisUrl;
    this.redisKeyPrefix = p.redisKeyPrefix;
    this.redisTimeout = p.redisTimeout;
    this.timeout = p.timeout;
  }

  /**
   * Reads and validates a configuration file.
   *
   * @param location a file path or {@code classpath:path/in/the/classpath}; the name ends with
   *     {@code .properties}, {@code .yml} or {@code .yaml} (YAML needs SnakeYAML on the classpath)
   * @throws IllegalArgumentException when the file cannot be read, or naming the property of an
   *     unknown key or a bad value (policy spec, algorithm, CIDR, SpEL, path, duplicate name, ...)
   */
  public static RateLimitConfig load(String location) {
    if (location == null || location.isBlank()) {
      throw new IllegalArgumentException("a rate-limit config location is required: a file path or classpath:...");
    }
    return parse(read(location.trim()), location.trim());
  }

  /** Validates {@code properties} as a configuration; {@code source} names it in messages. */
  static RateLimitConfig parse(Map<String, String> properties, String source) {
    try {
      return new RateLimitConfig(new ConfigParser(properties, source).parse());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("rate-limit config " + source + ": " + e.getMessage(), e);
    }
  }

  /** The rules, in order. */
  public List<RateLimitRule> rules() {
    return rules;
  }

  /** Whether every matching rule applies ({@code ratelimit.match=all}) or only the first. */
  public boolean matchAll() {
    return matchAll;
  }

  /** Which limit headers to send. */
  public HeaderOptions headers() {
    return headers;
  }

  /** The trusted proxies' networks. */
  public List<String> trustedProxies() {
    return trustedProxies;
  }

  /** What a request without a key gets. */
  public MissingKey missingKey() {
    return missingKey;
  }

  /**
   * What a denied request is answered with ({@code ratelimit.denied-response.*}), unless its rule
   * has a response of its own; by default {@link DeniedResponse#PROBLEM_JSON}.
   */
  public DeniedResponse deniedResponse() {
    return deniedResponse;
  }

  /** What a backend failure decides. */
  public FailureMode failureMode() {
    return failureMode;
  }

  /**
   * A new limiter as configured: the in-memory backend, or Redis (which needs
   * {@code dev.ratelimit:ratelimit-redis} on the classpath) through a Redisson client that the
   * limiter owns and shuts down when it is closed. Redis need not be reachable now: until it is,
   * the failure mode decides. The caller closes the limiter.
   *
   * @throws IllegalArgumentException naming {@code ratelimit.redis.url} when a Redis that answers
   *     refuses its user, password or database
   */
  public RateLimiter newLimiter() {
    return newLimiter(builder -> builder);
  }

  /**
   * {@link #newLimiter()}, with what the file cannot say added in code before the limiter is built:
   * {@code config.newLimiter(b -> b.listener(metrics).shadowPolicies(Set.of("login")).clock(clock))}.
   * The builder already holds the file's failure mode and timeout (a timeout set here should not be
   * shorter than {@code ratelimit.redis.timeout}); the backend is the file's, set after
   * {@code customize} runs. When {@code customize} or {@code build()} throws, that backend (and its
   * Redisson client) is closed.
   *
   * @throws IllegalArgumentException naming {@code ratelimit.redis.url} when a Redis that answers
   *     refuses its user, password or database, or as {@code customize} or the builder throws
   */
  public RateLimiter newLimiter(UnaryOperator<RateLimiter.Builder> customize) {
    Objects.requireNonNull(customize, "customize");
    Backend own = backend.equals("redis") ? RedisSupport.open(redisUrl, redisKeyPrefix, redisTimeout) : null;
    try {
      RateLimiter.Builder builder = customize.apply(RateLimiter.builder().failureMode(failureMode).timeout(timeout));
      if (own != null) {
        builder.backend(own);
      }
      return builder.build();
    } catch (RuntimeException | Error e) {
      if (own != null) {
        try {
          own.close();
        } catch (RuntimeException closing) {
          e.addSuppressed(closing);
        }
      }
      throw e;
    }
  }

  /**
   * A filter builder holding this configuration's rules and options, checking with
   * {@code limiter}; add a {@link DeniedHandler} or change anything before {@code build()}.
   */
  public RateLimitFilter.Builder filterBuilder(RateLimiter limiter) {
    RateLimitFilter.Builder builder = RateLimitFilter.builder(limiter)
        .matchAll(matchAll)
        .headers(headers)
        .trustedProxies(trustedProxies)
        .missingKey(missingKey)
        .deniedResponse(deniedResponse);
    rules.forEach(builder::rule);
    return builder;
  }

  String backend() {
    return backend;
  }

  String redisUrl() {
    return redisUrl;
  }

  String redisKeyPrefix() {
    return redisKeyPrefix;
  }

  Duration redisTimeout() {
    return redisTimeout;
  }

  /** How long a check of the limiter {@link #newLimiter()} builds waits for its backend. */
  Duration timeout() {
    return timeout;
  }

  @Override
  public String toString() {
    return "RateLimitConfig[" + source + ": " + rules.size() + " rules, backend " + backend
        + ", match " + (matchAll ? "all" : "first") + "]";
  }

  // ---------------------------------------------------------------------------------------------

  private static Map<String, String> read(String location) {
    String lower = location.toLowerCase(Locale.ROOT);
    boolean yaml = lower.endsWith(".yml") || lower.endsWith(".yaml");
    if (!yaml && !lower.endsWith(".properties")) {
      throw new IllegalArgumentException("rate-limit config " + location
          + ": the file name must end with .properties, .yml or .yaml");
    }
    if (yaml && !YamlSupport.available()) {
      throw new IllegalArgumentException("rate-limit config " + location
          + ": reading YAML needs SnakeYAML (org.yaml:snakeyaml) on the classpath; or use a .properties file");
    }
    try (InputStream in = open(location)) {
      if (yaml) {
        return YamlSupport.read(in, location);
      }
      java.util.Set<Object> repeated = new java.util.LinkedHashSet<>();
      Properties properties = new Properties() {
        @Override
        public synchronized Object put(Object key, Object value) {
          Object before = super.put(key, value);
          if (before != null) {
            repeated.add(key); // Properties keeps the last: a copied block not renumbered loses a rule
          }
          return before;
        }
      };
      java.io.Reader reader = new java.io.BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
      reader.mark(1);
      if (reader.read() != '\uFEFF') { // a byte-order mark (Windows editors) would join the first key
        reader.reset();
      }
      properties.load(reader);
      if (!repeated.isEmpty()) {
        throw new IllegalArgumentException("rate-limit config " + location + ": " + repeated.iterator().next()
            + " is given twice; a properties file keeps only the last value (a rule copied without its index"
            + " renumbered replaces the first): give each property once");
      }
      Map<String, String> map = new LinkedHashMap<>();
      for (String name : properties.stringPropertyNames()) {
        map.put(name, properties.getProperty(name));
      }
      return map;
    } catch (IOException e) {
      throw new IllegalArgumentException("rate-limit config " + location + " cannot be read: " + e, e);
    }
  }

  private static InputStream open(String location) throws IOException {
    if (location.startsWith("classpath:")) {
      String name = location.substring("classpath:".length());
      name = name.startsWith("/") ? name.substring(1) : name;
      ClassLoader context = Thread.currentThread().getContextClassLoader();
      InputStream in = context == null ? null : context.getResourceAsStream(name);
      if (in == null) {
        in = RateLimitConfig.class.getClassLoader().getResourceAsStream(name);
      }
      if (in == null) {
        throw new IllegalArgumentException("rate-limit config " + location + " is not on the classpath");
      }
      return in;
    }
    try {
      return Files.newInputStream(Path.of(location));
    } catch (NoSuchFileException e) {
      throw new IllegalArgumentException("rate-limit config " + location + " does not exist: it is read as a"
          + " file path (relative to the JVM's working directory, " + Path.of("").toAbsolutePath() + "); for a"
          + " file of the web application (WEB-INF/classes) write classpath:" + Path.of(location).getFileName(), e);
    }
  }
}

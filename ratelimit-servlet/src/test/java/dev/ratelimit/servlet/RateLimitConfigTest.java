package dev.ratelimit.servlet;

import dev.ratelimit.http.HeaderOptions;
import dev.ratelimit.http.MissingKey;
import dev.ratelimit.http.RateLimitRule;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Algorithm;
import dev.ratelimit.FailureMode;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RateLimitConfigTest {
  private static final String MINIMAL = """
      ratelimit.rules[0].name=api
      ratelimit.rules[0].paths=/api/**
      ratelimit.rules[0].policies[0].limit=100/1m
      """;

  @TempDir
  Path dir;

  private RateLimitConfig loadProperties(String text) {
    return RateLimitConfig.load(write("ratelimit.properties", text).toString());
  }

  private Path write(String name, String text) {
    try {
      return Files.writeString(dir.resolve(name), text, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Map<String, String> properties(String text) {
    Properties p = new Properties();
    try {
      p.load(new StringReader(text));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Map<String, String> map = new LinkedHashMap<>();
    p.stringPropertyNames().forEach(n -> map.put(n, p.getProperty(n)));
    return map;
  }

  @Test
  void defaults() {
    RateLimitConfig config = loadProperties(MINIMAL);
    assertThat(config.backend()).isEqualTo("memory");
    assertThat(config.failureMode()).isEqualTo(FailureMode.FAIL_OPEN);
    assertThat(config.matchAll()).isFalse();
    assertThat(config.headers()).isEqualTo(HeaderOptions.DEFAULT);
    assertThat(config.trustedProxies()).isEmpty();
    assertThat(config.missingKey()).isEqualTo(MissingKey.SHARED_BUCKET);
    RateLimitRule rule = config.rules().get(0);
    assertThat(rule.name()).isEqualTo("api");
    assertThat(rule.paths()).containsExactly("/api/**");
    assertThat(rule.methods()).isEmpty();
    assertThat(rule.key()).isEqualTo("#clientIp");
    assertThat(rule.cost()).isEqualTo("1");
    assertThat(rule.policies()).containsExactly(Policy.parse("100/1m"));
  }

  @Test
  void everyProperty() {
    RateLimitConfig config = loadProperties("""
        ratelimit.backend=memory
        ratelimit.failure-mode=fail-closed
        ratelimit.match=ALL
        ratelimit.headers.draft=false
        ratelimit.headers.legacy=true
        ratelimit.trusted-proxies=10.0.0.0/8, ::1/128
        ratelimit.missing-key=reject
        ratelimit.rules[0].name=api
        ratelimit.rules[0].paths[0]=/api/**
        ratelimit.rules[0].paths[1]=/v2/{id}
        ratelimit.rules[0].methods=get, POST
        ratelimit.rules[0].key=#headers['X-Api-Key'] ?: #clientIp
        ratelimit.rules[0].cost=#params['n'] ?: 1
        ratelimit.rules[0].policies[0].name=per-ip
        ratelimit.rules[0].policies[0].limit=100/1m
        ratelimit.rules[0].policies[0].algorithm=token-bucket
        ratelimit.rules[0].policies[0].burst=20
        ratelimit.rules[0].policies[1].limit=5/s
        ratelimit.rules[1].name=login
        ratelimit.rules[1].paths=/login
        ratelimit.rules[1].policies[0].name=login
        ratelimit.rules[1].policies[0].limit=1000000/1d
        ratelimit.rules[1].policies[0].algorithm=FIXED_WINDOW
        """);
    assertThat(config.failureMode()).isEqualTo(FailureMode.FAIL_CLOSED);
    assertThat(config.matchAll()).isTrue();
    assertThat(config.headers()).isEqualTo(new HeaderOptions(false, true));
    assertThat(config.trustedProxies()).containsExactly("10.0.0.0/8", "::1/128");
    assertThat(config.missingKey()).isEqualTo(MissingKey.REJECT);
    RateLimitRule api = config.rules().get(0);
    assertThat(api.paths()).containsExactly("/api/**", "/v2/{id}");
    assertThat(api.methods()).containsExactly("GET", "POST");
    assertThat(api.key()).isEqualTo("#headers['X-Api-Key'] ?: #clientIp");
    assertThat(api.cost()).isEqualTo("#params['n'] ?: 1");
    assertThat(api.policies().get(0)).isEqualTo(
        Policy.of(100, Duration.ofMinutes(1)).withAlgorithm(Algorithm.TOKEN_BUCKET).withBurst(20).withName("per-ip"));
    assertThat(api.policies().get(1)).isEqualTo(Policy.parse("5/s"));
    // a limit GCRA could not compute exactly, fine for a fixed window
    assertThat(config.rules().get(1).policies().get(0))
        .isEqualTo(Policy.of(1_000_000, Duration.ofDays(1), Algorithm.FIXED_WINDOW).withName("login"));
  }

  @Test
  void yamlMirrorsTheProperties() {
    RateLimitConfig config = RateLimitConfig.load("classpath:ratelimit-test.yml");
    assertThat(config.matchAll()).isTrue();
    assertThat(config.headers()).isEqualTo(new HeaderOptions(true, true));
    assertThat(config.trustedProxies()).containsExactly("10.0.0.0/8", "::1/128");
    assertThat(config.missingKey()).isEqualTo(MissingKey.REJECT);
    assertThat(config.rules()).extracting(RateLimitRule::name).containsExactly("login", "api");
    assertThat(config.rules().get(0).methods()).containsExactly("POST");
    assertThat(config.rules().get(0).policies())
        .containsExactly(Policy.of(2, Duration.ofMinutes(1), Algorithm.SLIDING_LOG).withName("login-per-ip"));
    RateLimitRule api = config.rules().get(1);
    assertThat(api.paths()).containsExactly("/api/**", "/v2/{tenant}/**");
    assertThat(api.key()).isEqualTo("#headers['X-Api-Key']");
    assertThat(api.policies()).extracting(Policy::name).containsExactly("per-key", "per-key-daily");
    assertThat(api.policies().get(0).burst()).isEqualTo(5);
  }

  @Test
  void redisBackend() {
    RateLimitConfig config = loadProperties(MINIMAL + """
        ratelimit.backend=redis
        ratelimit.redis.url=redis://user:secret@127.0.0.1:6390/2
        ratelimit.redis.key-prefix=myapp
        ratelimit.redis.timeout=1s
        ratelimit.timeout=1500ms
        """);
    assertThat(config.backend()).isEqualTo("redis");
    assertThat(config.redisUrl()).isEqualTo("redis://user:secret@127.0.0.1:6390/2");
    assertThat(config.redisKeyPrefix()).isEqualTo("myapp");
    assertThat(config.redisTimeout()).isEqualTo(Duration.ofSeconds(1));
    assertThat(config.timeout()).isEqualTo(Duration.ofMillis(1500));
    assertThat(config.toString()).doesNotContain("secret");
    assertThat(loadProperties(MINIMAL).timeout()).as("the limiter's default")
        .isEqualTo(RateLimiter.Builder.DEFAULT_TIMEOUT);
    RateLimitConfig shortWait = loadProperties(MINIMAL + """
        ratelimit.backend=redis
        ratelimit.redis.url=redis://127.0.0.1:6390
        ratelimit.timeout=100ms
        """);
    assertThat(shortWait.redisTimeout()).as("the default Redis timeout, shortened to the limiter's")
        .isEqualTo(Duration.ofMillis(100));
  }

  @Test
  void whatTheFileCannotSayIsAddedInCode() {
    RateLimitConfig config = loadProperties(MINIMAL);
    ManualClock clock = ManualClock.at(java.time.Instant.parse("2026-12-01T00:00:00Z"));
    List<String> outcomes = new java.util.concurrent.CopyOnWriteArrayList<>();
    Policy policy = Policy.of(1, Duration.ofMinutes(1)).withName("p");
    try (RateLimiter limiter = config.newLimiter(b -> b.clock(clock)
        .listener(new RateLimitListener() {
          @Override
          public void onDecision(Policy p, Outcome outcome) {
            outcomes.add(p.name() + " " + outcome);
          }
        }))) {
      assertThat(limiter.check("k", policy).allowed()).isTrue();
      assertThat(limiter.check("k", policy).allowed()).isFalse();
      clock.advance(Duration.ofMinutes(1));
      assertThat(limiter.check("k", policy).allowed()).as("on the given clock").isTrue();
    }
    assertThat(outcomes).containsExactly("p ALLOWED", "p DENIED", "p ALLOWED");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', textBlock = """
      bad policy spec           | ratelimit.rules[0].policies[0].limit=100/1x                  | ratelimit.rules[0].policies[0].limit: cannot parse policy spec '100/1x'
      zero limit                | ratelimit.rules[0].policies[0].limit=0/1m                    | ratelimit.rules[0].policies[0].limit: limit must be at least 1
      unknown algorithm         | ratelimit.rules[0].policies[0].algorithm=LEAKY               | ratelimit.rules[0].policies[0].algorithm: 'LEAKY' is not one of FIXED_WINDOW, SLIDING_LOG
      bad burst                 | ratelimit.rules[0].policies[0].burst=lots                    | ratelimit.rules[0].policies[0].burst: 'lots' is not a whole number
      zero burst                | ratelimit.rules[0].policies[0].burst=0                       | ratelimit.rules[0].policies[0].burst: burst must be at least 1
      burst of a window         | ratelimit.rules[0].policies[0].algorithm=FIXED_WINDOW\\nratelimit.rules[0].policies[0].burst=5 | ratelimit.rules[0].policies[0].burst: applies only to TOKEN_BUCKET, GCRA and LEAKY_BUCKET
      bad CIDR                  | ratelimit.trusted-proxies=10.0.0.0/8,10.0.0.0/33              | ratelimit.trusted-proxies: not an IPv4 or IPv6 network: '10.0.0.0/33'
      bad CIDR indexed          | ratelimit.trusted-proxies[0]=::1\\nratelimit.trusted-proxies[1]=proxy.local | ratelimit.trusted-proxies[1]: not an IPv4 or IPv6 network: 'proxy.local'
      unparsable key SpEL       | ratelimit.rules[0].key=#headers['x'                          | ratelimit.rules[0].key: rule 'api': key expression '#headers['x'' does not parse
      refused key SpEL          | ratelimit.rules[0].key=T(java.lang.Runtime).getRuntime()     | ratelimit.rules[0].key: rule 'api': key expression 'T(java.lang.Runtime).getRuntime()' is refused
      unparsable cost SpEL      | ratelimit.rules[0].cost=1 +                                  | ratelimit.rules[0].cost: rule 'api': cost expression '1 +' does not parse
      unknown variable          | ratelimit.rules[0].key=#clientip                             | ratelimit.rules[0].key: rule 'api': key expression '#clientip' reads #clientip, an unknown variable
      unknown rule key          | ratelimit.rules[0].polcies[0].limit=1/s                      | ratelimit.rules[0].polcies[0].limit: unknown property
      unknown policy key        | ratelimit.rules[0].policies[0].limt=1/s                      | ratelimit.rules[0].policies[0].limt: unknown property
      unknown top key           | ratelimit.trusted-proxy=10.0.0.0/8                           | ratelimit.trusted-proxy: unknown property
      no ratelimit prefix       | ratelimt.backend=memory                                      | ratelimt.backend: unknown property (every key starts with 'ratelimit.')
      index with leading zero   | ratelimit.rules[00].name=x                                   | ratelimit.rules[00].name: unknown property
      duplicate policy names    | ratelimit.rules[0].policies[0].name=p\\nratelimit.rules[0].policies[1].name=p\\nratelimit.rules[0].policies[1].limit=1/s | ratelimit.rules[0].policies[1].name: policy name 'p' is also the name of ratelimit.rules[0].policies[0]
      redirect status           | ratelimit.denied-response.status=302                         | ratelimit.denied-response.status: status 302 is not a 4xx or 5xx status
      status not a number       | ratelimit.denied-response.status=many                        | ratelimit.denied-response.status: 'many' is not a status code such as 429 or 503
      unknown placeholder       | ratelimit.denied-response.content-type=application/json\\nratelimit.denied-response.body=try {{polcy}} | ratelimit.denied-response.body: unknown placeholder '{{polcy}}' in the body; the placeholders are {{status}}
      body without its type     | ratelimit.denied-response.body=slow down                     | ratelimit.denied-response.content-type: a body needs a content type
      bad content type          | ratelimit.denied-response.content-type=json                  | ratelimit.denied-response.content-type: content type 'json' is not a media type
      header the limiter writes | ratelimit.denied-response.headers.Retry-After=5              | ratelimit.denied-response.headers.Retry-After: header 'Retry-After' is written by the limiter itself
      rule success status       | ratelimit.rules[0].denied-response.status=200                | ratelimit.rules[0].denied-response.status: status 200 is not a 4xx or 5xx status
      rule body without type    | ratelimit.rules[0].denied-response.body=x                    | ratelimit.rules[0].denied-response.content-type: a body needs a content type
      unknown response key      | ratelimit.denied-response.code=503                           | ratelimit.denied-response.code: unknown property
      non-ASCII policy name     | ratelimit.rules[0].policies[0].name=café                     | ratelimit.rules[0].policies[0].name: policy name 'café' (ratelimit.rules[0].policies[0]) cannot be written in the RateLimit and RateLimit-Policy headers
      duplicate derived names   | ratelimit.rules[0].policies[1].limit=100/1m                  | ratelimit.rules[0].policies[1].name: policy name '100-per-PT1M-gcra' is also the name of ratelimit.rules[0].policies[0]
      duplicate rule names      | ratelimit.rules[1].name=api\\nratelimit.rules[1].paths=/x\\nratelimit.rules[1].policies[0].limit=1/s | ratelimit.rules[1].name: rule name 'api' is also the name of ratelimit.rules[0]
      shared policy with all    | ratelimit.match=all\\nratelimit.rules[1].name=b\\nratelimit.rules[1].paths=/x\\nratelimit.rules[1].policies[0].limit=100/1m | ratelimit.rules[1].policies[0].name: policy name '100-per-PT1M-gcra' is also used by ratelimit.rules[0]
      bad rule name             | ratelimit.rules[0].name=my api                               | ratelimit.rules[0].name: rule name 'my api' must be 1 to 64 letters
      colon in rule name        | ratelimit.rules[0].name=a:b                                  | ratelimit.rules[0].name: rule name 'a:b'
      bad path                  | ratelimit.rules[0].paths=/api/**,api                         | ratelimit.rules[0].paths: rule 'api': path 'api' must start with '/'
      unparsable path           | ratelimit.rules[0].paths=/api/{id                            | ratelimit.rules[0].paths: rule 'api': path '/api/{id' does not parse
      bad method                | ratelimit.rules[0].methods=GET,P OST                         | ratelimit.rules[0].methods: rule 'api': 'P OST' is not an HTTP method
      empty list entry          | ratelimit.rules[0].methods=GET,,POST                         | ratelimit.rules[0].methods: has an empty entry
      both list forms           | ratelimit.rules[0].paths[0]=/x                               | ratelimit.rules[0].paths: is given both as a list and as ratelimit.rules[0].paths[0]
      gap in rules              | ratelimit.rules[2].name=c\\nratelimit.rules[2].paths=/c\\nratelimit.rules[2].policies[0].limit=1/s | ratelimit.rules[1]: is missing
      gap in policies           | ratelimit.rules[0].policies[2].limit=1/s                     | ratelimit.rules[0].policies[1]: is missing
      missing limit             | ratelimit.rules[0].policies[1].name=other                    | ratelimit.rules[0].policies[1].limit: is required
      policies without rule     | ratelimit.rules[1].policies[0].limit=1/s                     | ratelimit.rules[1].name: is required
      bad boolean               | ratelimit.headers.draft=yes                                  | ratelimit.headers.draft: 'yes' is not one of true, false
      bad match                 | ratelimit.match=any                                          | ratelimit.match: 'any' is not one of first, all
      bad missing key           | ratelimit.missing-key=drop                                   | ratelimit.missing-key: 'drop' is not one of shared-bucket, reject
      bad failure mode          | ratelimit.failure-mode=OPEN                                  | ratelimit.failure-mode: 'OPEN' is not one of FAIL_OPEN, FAIL_CLOSED, LOCAL_FALLBACK
      inline comment            | ratelimit.backend=memory    # or redis                       | ratelimit.backend: 'memory    # or redis' is not one of memory, redis
      redis without backend     | ratelimit.redis.url=redis://127.0.0.1:6379                   | ratelimit.redis.url: is set but ratelimit.backend is memory
      redis without url         | ratelimit.backend=redis                                      | ratelimit.redis.url: is required
      redis bad url             | ratelimit.backend=redis\\nratelimit.redis.url=http://h:1      | ratelimit.redis.url: 'http://h:1' is not a redis://, rediss://
      redis bad prefix          | ratelimit.backend=redis\\nratelimit.redis.url=redis://h\\nratelimit.redis.key-prefix=a:b | ratelimit.redis.key-prefix: 'a:b' must be
      redis bad timeout         | ratelimit.backend=redis\\nratelimit.redis.url=redis://h\\nratelimit.redis.timeout=soon | ratelimit.redis.timeout: 'soon' is not a positive duration
      redis timeout too long    | ratelimit.backend=redis\\nratelimit.redis.url=redis://h\\nratelimit.redis.timeout=1s | ratelimit.redis.timeout: '1s' is longer than ratelimit.timeout (250 ms)
      bad limiter timeout       | ratelimit.timeout=0ms                                        | ratelimit.timeout: '0ms' is not a positive duration
      redis query refused       | ratelimit.backend=redis\\nratelimit.redis.url=redis://h:1?ssl=true | ratelimit.redis.url: 'redis://h:1?ssl=true': takes no query
      redis password hidden     | ratelimit.backend=redis\\nratelimit.redis.url=redis://u:hunter2@h/x | ratelimit.redis.url: 'redis://***@h/x': the path must be a database number
      """)
  void badConfigNamesTheProperty(String kind, String extra, String message) {
    String text = withLines(MINIMAL, extra.replace("\\n", "\n"));
    assertThatThrownBy(() -> loadProperties(text))
        .as(kind)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(message)
        .hasMessageNotContaining("hunter2");
  }

  /** {@code base} with {@code lines} added, each replacing the line of {@code base} with its key (a key is given once). */
  private static String withLines(String base, String lines) {
    Map<String, String> byKey = new LinkedHashMap<>();
    for (String line : (base + "\n" + lines).split("\n")) {
      if (!line.isBlank()) {
        byKey.put(line.substring(0, line.indexOf('=')).trim(), line);
      }
    }
    return String.join("\n", byKey.values()) + "\n";
  }

  @Test
  void gcraRefusesWhatItCannotComputeExactlyNamingTheLimit() {
    assertThatThrownBy(() -> loadProperties(MINIMAL.replace("100/1m", "1000000/1d")))
        .hasMessageContaining("ratelimit.rules[0].policies[0].limit")
        .hasMessageContaining("FIXED_WINDOW");
  }

  @Test
  void noRuleIsAnError() {
    assertThatThrownBy(() -> loadProperties("ratelimit.backend=memory\n"))
        .hasMessageContaining("ratelimit.rules: at least one rule is required");
    assertThatThrownBy(() -> loadProperties("ratelimit.rules[0].name=x\nratelimit.rules[0].policies[0].limit=1/s\n"))
        .hasMessageContaining("ratelimit.rules[0].paths: is required");
    assertThatThrownBy(() -> loadProperties("ratelimit.rules[0].name=x\nratelimit.rules[0].paths=/x\n"))
        .hasMessageContaining("ratelimit.rules[0].policies: at least one policy is required");
  }

  @Test
  void yamlNamesThePropertyToo() {
    write("bad.yaml", """
        ratelimit:
          rules:
            - name: api
              paths: /api/**
              key: #clientIp
              policies:
                - limit: 100/1m
        """);
    assertThatThrownBy(() -> RateLimitConfig.load(dir.resolve("bad.yaml").toString()))
        .hasMessageContaining("ratelimit.rules[0].key: has no value")
        .hasMessageContaining("quote");
    write("typo.yml", """
        ratelimit:
          rules:
            - name: api
              path: /api/**
              policies:
                - limit: 100/1m
        """);
    assertThatThrownBy(() -> RateLimitConfig.load(dir.resolve("typo.yml").toString()))
        .hasMessageContaining("ratelimit.rules[0].path: unknown property");
    write("dup.yml", """
        ratelimit:
          backend: memory
          backend: redis
        """);
    assertThatThrownBy(() -> RateLimitConfig.load(dir.resolve("dup.yml").toString()))
        .hasMessageContaining("not valid YAML").hasMessageContaining("backend");
  }

  @Test
  void locations() {
    assertThatThrownBy(() -> RateLimitConfig.load(dir.resolve("absent.properties").toString()))
        .hasMessageContaining("absent.properties does not exist").hasMessageContaining("classpath:absent.properties");
    assertThatThrownBy(() -> RateLimitConfig.load("classpath:absent.yml"))
        .hasMessageContaining("classpath:absent.yml is not on the classpath");
    assertThatThrownBy(() -> RateLimitConfig.load(write("ratelimit.conf", MINIMAL).toString()))
        .hasMessageContaining("must end with .properties, .yml or .yaml");
    assertThatThrownBy(() -> RateLimitConfig.load(" "))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aPropertyGivenTwiceIsRefusedNotOverwritten() {
    // a second rule copied from the first and not renumbered would replace it: /login unlimited
    String copied = MINIMAL + """
        ratelimit.rules[0].name=login
        ratelimit.rules[0].paths=/login
        ratelimit.rules[0].policies[0].limit=5/5m
        """;
    assertThatThrownBy(() -> loadProperties(copied)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ratelimit.rules[0].name is given twice");
  }

  @Test
  void aYamlPropertyGivenNestedAndDottedIsRefused() {
    String yaml = """
        ratelimit:
          backend: memory
          rules:
            - name: api
              paths: [/api/**]
              policies: [{limit: 100/1m}]
        ratelimit.backend: redis
        """;
    assertThatThrownBy(() -> RateLimitConfig.load(write("ratelimit.yml", yaml).toString()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ratelimit.backend is given twice");
  }

  @Test
  void aByteOrderMarkIsNotPartOfTheFirstKey() {
    RateLimitConfig config = loadProperties("\uFEFF" + MINIMAL);
    assertThat(config.rules()).extracting(RateLimitRule::name).containsExactly("api");
  }

  @Test
  void parsedFromAMapDirectly() {
    RateLimitConfig config = RateLimitConfig.parse(properties(MINIMAL), "test");
    assertThat(config.rules()).hasSize(1);
    assertThat(Set.copyOf(config.rules().get(0).paths())).containsExactly("/api/**");
    assertThat(List.of(config.toString())).allMatch(s -> s.contains("1 rules"));
  }
}

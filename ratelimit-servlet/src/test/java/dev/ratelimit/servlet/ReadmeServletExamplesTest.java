package dev.ratelimit.servlet;

import dev.ratelimit.http.DeniedResponse;
import dev.ratelimit.http.RateLimitRule;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.tck.docs.DocPage;
import dev.ratelimit.tck.http.StructuredFields;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterRegistration;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The examples of docs/servlet-filter.md and the quick start of README.md, run as written there. */
class ReadmeServletExamplesTest {
  private static final String PAGE = "docs/servlet-filter.md";

  /** The page's Java example, verbatim; {@link #programmaticExample} runs exactly these lines. */
  private static final String PROGRAMMATIC = """
      RateLimiter limiter = RateLimiter.inMemory();                      // or a Redis-backed limiter
      RateLimitFilter filter = RateLimitFilter.builder(limiter)
          .rule(RateLimitRule.builder("login")
              .path("/login")
              .method("POST")
              .policy(Policy.parse("5/5m").withName("login-per-ip"))   // key: #clientIp (default)
              .build())
          .rule(RateLimitRule.builder("api")
              .path("/api/**", "/users/{id}")
              .policy(Policy.parse("100/1m").withName("per-key"))
              .key("#headers['X-Api-Key'] ?: #clientIp")
              .cost("#method == 'GET' ? 1 : 5")
              .build())
          .trustedProxies(List.of("10.0.0.0/8"))
          .build();
      FilterRegistration.Dynamic registration = servletContext.addFilter("rateLimit", filter);
      registration.setAsyncSupported(true);   // else an async servlet or controller behind it fails
      registration.addMappingForUrlPatterns(null, false, "/*");
      """;

  /** The page's example of adding in code what the file cannot say; {@link #customizedExample} runs it. */
  private static final String CUSTOMIZED = """
      RateLimitConfig config = RateLimitConfig.load("classpath:ratelimit.properties");
      RateLimiter limiter = config.newLimiter(b -> b.listener(metrics).shadowPolicies(Set.of("per-key")));
      RateLimitFilter filter = config.filterBuilder(limiter).build();   // close the limiter when done
      FilterRegistration.Dynamic registration = servletContext.addFilter("rateLimit", filter);
      registration.setAsyncSupported(true);   // else an async servlet or controller behind it fails
      registration.addMappingForUrlPatterns(null, false, "/*");
      """;

  /** The page's example of a denied response in code; {@link #deniedResponseInCode} runs it. */
  private static final String DENIED = """
      DeniedResponse busy = DeniedResponse.builder()
          .status(503)
          .contentType("text/plain")
          .body("busy, retry in {{retry-after}} s")
          .build();
      RateLimitFilter filter = RateLimitFilter.builder(limiter)
          .rule(RateLimitRule.builder("v1")
              .path("/v1/**")
              .policy(Policy.parse("10/1m").withName("v1-per-ip"))
              .deniedResponse(busy)                                      // this rule's
              .build())
          .deniedResponse(DeniedResponse.builder().contentType("application/json").build())  // the others'
          .build();
      """;

  @TempDir
  Path dir;

  /** The filter's page, whose examples these are. */
  private static String section() {
    return DocPage.read(PAGE).text();
  }

  private static List<String> blocks(String section, String language) {
    Matcher m = Pattern.compile("```" + language + "\n(.*?)```", Pattern.DOTALL).matcher(section);
    List<String> blocks = new ArrayList<>();
    while (m.find()) {
      blocks.add(m.group(1));
    }
    return blocks;
  }

  @Test
  void thePageShowsTheCodeThisTestRuns() {
    assertThat(blocks(section(), "java")).containsExactly(PROGRAMMATIC, CUSTOMIZED, DENIED);
  }

  @Test
  void programmaticExample() {
    AtomicReference<RateLimiter> created = new AtomicReference<>();
    ServletContextListener initializer = new ServletContextListener() {
      @Override
      public void contextInitialized(ServletContextEvent event) {
        ServletContext servletContext = event.getServletContext();
        // --- as in the page
        RateLimiter limiter = RateLimiter.inMemory();                      // or a Redis-backed limiter
        RateLimitFilter filter = RateLimitFilter.builder(limiter)
            .rule(RateLimitRule.builder("login")
                .path("/login")
                .method("POST")
                .policy(Policy.parse("5/5m").withName("login-per-ip"))   // key: #clientIp (default)
                .build())
            .rule(RateLimitRule.builder("api")
                .path("/api/**", "/users/{id}")
                .policy(Policy.parse("100/1m").withName("per-key"))
                .key("#headers['X-Api-Key'] ?: #clientIp")
                .cost("#method == 'GET' ? 1 : 5")
                .build())
            .trustedProxies(List.of("10.0.0.0/8"))
            .build();
        FilterRegistration.Dynamic registration = servletContext.addFilter("rateLimit", filter);
        registration.setAsyncSupported(true);   // else an async servlet or controller behind it fails
        registration.addMappingForUrlPatterns(null, false, "/*");
        // ---
        created.set(limiter);
      }
    };
    try (TestServer server = TestServer.start(context -> context.addEventListener(initializer))) {
      exerciseTheTwoRules(server);
    } finally {
      created.get().close();
    }
  }

  @Test
  void customizedExample() throws Exception {
    Path classes = Files.createDirectories(dir.resolve("classes"));
    Files.writeString(classes.resolve("ratelimit.properties"), blocks(section(), "properties").get(0));
    List<String> shadowDenials = new java.util.concurrent.CopyOnWriteArrayList<>();
    dev.ratelimit.RateLimitListener metrics = new dev.ratelimit.RateLimitListener() {
      @Override
      public void onDecision(Policy policy, Outcome outcome) {
        if (outcome == Outcome.SHADOW_DENIED) {
          shadowDenials.add(policy.name());
        }
      }
    };
    AtomicReference<RateLimiter> created = new AtomicReference<>();
    Thread thread = Thread.currentThread();
    ClassLoader before = thread.getContextClassLoader();
    try (URLClassLoader webapp = new URLClassLoader(new URL[] {classes.toUri().toURL()}, getClass().getClassLoader())) {
      thread.setContextClassLoader(webapp);
      ServletContextListener initializer = new ServletContextListener() {
        @Override
        public void contextInitialized(ServletContextEvent event) {
          ServletContext servletContext = event.getServletContext();
          // --- as in the page
          RateLimitConfig config = RateLimitConfig.load("classpath:ratelimit.properties");
          RateLimiter limiter = config.newLimiter(b -> b.listener(metrics).shadowPolicies(Set.of("per-key")));
          RateLimitFilter filter = config.filterBuilder(limiter).build();   // close the limiter when done
          FilterRegistration.Dynamic registration = servletContext.addFilter("rateLimit", filter);
          registration.setAsyncSupported(true);   // else an async servlet or controller behind it fails
          registration.addMappingForUrlPatterns(null, false, "/*");
          // ---
          created.set(limiter);
        }
      };
      try (TestServer server = TestServer.start(context -> context.addEventListener(initializer))) {
        for (int i = 0; i < 21; i++) { // 100 a minute at cost 5: the 21st write would be denied
          assertThat(server.send("POST", "/api/x", "X-Api-Key", "k").statusCode()).as("per-key is a shadow policy")
              .isEqualTo(200);
        }
      } finally {
        if (created.get() != null) { // null when the initializer failed: that failure is the one to see
          created.get().close();
        }
      }
    } finally {
      thread.setContextClassLoader(before);
    }
    assertThat(shadowDenials).containsExactly("per-key");
  }

  @Test
  void webXmlAndPropertiesExample() throws Exception {
    String section = section();
    String webXml = blocks(section, "xml").get(0);
    String filterClass = element(webXml, "filter-class");
    String paramName = element(webXml, "param-name");
    String paramValue = element(webXml, "param-value");
    assertThat(element(webXml, "url-pattern")).isEqualTo("/*");
    assertThat(paramName).isEqualTo(RateLimitFilter.CONFIG_PARAM);
    assertThat(paramValue).isEqualTo("classpath:ratelimit.properties");
    assertThat(element(webXml, "async-supported")).as("async servlets behind the filter work").isEqualTo("true");

    // WEB-INF/classes of a web application: the context's class loader
    Path classes = Files.createDirectories(dir.resolve("WEB-INF/classes"));
    Files.writeString(classes.resolve("ratelimit.properties"), blocks(section, "properties").get(0));
    try (URLClassLoader webapp = new URLClassLoader(new URL[] {classes.toUri().toURL()}, getClass().getClassLoader())) {
      @SuppressWarnings("unchecked")
      Class<? extends Filter> type = (Class<? extends Filter>) Class.forName(filterClass);
      try (TestServer server = TestServer.start(context -> {
        context.setClassLoader(webapp);
        FilterHolder holder = new FilterHolder(type);
        holder.setName(element(webXml, "filter-name"));
        holder.setInitParameter(paramName, paramValue);
        holder.setAsyncSupported(Boolean.parseBoolean(element(webXml, "async-supported")));
        context.addFilter(holder, element(webXml, "url-pattern"), EnumSet.of(DispatcherType.REQUEST));
      })) {
        exerciseTheTwoRules(server);
      }
    }
  }

  @Test
  void readmeQuickStartLimitsLoginsFromAFile() throws Exception {
    String properties = DocPage.read("README.md").block("properties", "limit=5/5m");
    Path classes = Files.createDirectories(dir.resolve("readme/WEB-INF/classes"));
    Files.writeString(classes.resolve("ratelimit.properties"), properties);
    try (URLClassLoader webapp = new URLClassLoader(new URL[] {classes.toUri().toURL()}, getClass().getClassLoader())) {
      try (TestServer server = TestServer.start(context -> {
        context.setClassLoader(webapp);
        FilterHolder holder = new FilterHolder(RateLimitFilter.class);
        holder.setInitParameter(RateLimitFilter.CONFIG_PARAM, "classpath:ratelimit.properties");
        holder.setAsyncSupported(true);
        context.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST));
      })) {
        for (int i = 0; i < 5; i++) {
          assertThat(server.send("POST", "/login").statusCode()).isEqualTo(200);
        }
        HttpResponse<String> denied = server.send("POST", "/login");
        assertThat(denied.statusCode()).as("the sixth in five minutes").isEqualTo(429);
        assertThat(Json.object(denied.body()).get("violated-policies")).isEqualTo(List.of("login-per-ip"));
        assertThat(server.get("/login").statusCode()).as("POST only").isEqualTo(200);
      }
    }
  }

  @Test
  void readmeConditionsLeaveHealthChecksOutAndCountFailedLogins() throws Exception {
    String properties = DocPage.read("README.md").block("properties", "skip-when");
    // the test's client is a trusted proxy, so that it can speak for 10.0.0.7 and others
    Path file = Files.writeString(dir.resolve("conditions.properties"),
        properties + "ratelimit.trusted-proxies=127.0.0.1/32\n");
    try (TestServer server = TestServer.start(context -> {
      context.addServlet(new org.eclipse.jetty.ee10.servlet.ServletHolder(new CountWhenFilterTest.Login()), "/login");
      FilterHolder holder = new FilterHolder(RateLimitFilter.class);
      holder.setInitParameter(RateLimitFilter.CONFIG_PARAM, file.toString());
      context.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST));
    })) {
      for (int i = 0; i < 10; i++) {
        assertThat(server.send("POST", "/login?password=right").statusCode()).isEqualTo(200);
      }
      for (int i = 0; i < 5; i++) {
        assertThat(server.send("POST", "/login?password=wrong").statusCode()).isEqualTo(401);
      }
      assertThat(server.send("POST", "/login?password=right").statusCode()).as("five failures: locked out")
          .isEqualTo(429);
      for (int i = 0; i < 150; i++) {
        assertThat(server.get("/health").statusCode()).isEqualTo(200);
        assertThat(server.get("/orders", "X-Forwarded-For", "10.0.0.7").statusCode()).isEqualTo(200);
      }
      HttpResponse<String> counted = server.get("/orders", "X-Forwarded-For", "10.0.0.8");
      assertThat(remaining(counted)).isEqualTo(99);
      assertThat(server.get("/health").headers().firstValue("RateLimit")).as("not checked").isEmpty();
    }
  }

  /** What both examples configure: login 5 per 5 min per IP on POST, api 100/min per key, cost 5 for writes. */
  private static void exerciseTheTwoRules(TestServer server) {
    for (int i = 0; i < 5; i++) {
      assertThat(server.send("POST", "/login").statusCode()).isEqualTo(200);
    }
    HttpResponse<String> denied = server.send("POST", "/login");
    assertThat(denied.statusCode()).isEqualTo(429);
    assertThat(Json.object(denied.body()).get("violated-policies")).isEqualTo(List.of("login-per-ip"));
    assertThat(server.get("/login").headers().firstValue("RateLimit")).isEmpty(); // POST only

    HttpResponse<String> read = server.get("/api/things", "X-Api-Key", "k1");
    assertThat(remaining(read)).isEqualTo(99);
    assertThat(remaining(server.send("POST", "/users/7", "X-Api-Key", "k1"))).isEqualTo(94);
    assertThat(remaining(server.get("/users/7"))).isEqualTo(99); // no key: by client IP
    assertThat(remaining(server.get("/users/7", "X-Forwarded-For", "203.0.113.9"))).isEqualTo(98); // not trusted
  }

  private static long remaining(HttpResponse<String> response) {
    assertThat(response.statusCode()).isEqualTo(200);
    return StructuredFields.parseList(response.headers().firstValue("RateLimit").orElseThrow()).get(0).integer("r");
  }

  @Test
  void yamlExampleIsTheSameConfiguration() throws IOException {
    String section = section();
    Path properties = Files.writeString(dir.resolve("ratelimit.properties"), blocks(section, "properties").get(0));
    Path yaml = Files.writeString(dir.resolve("ratelimit.yaml"), blocks(section, "yaml").get(0));
    RateLimitConfig fromProperties = RateLimitConfig.load(properties.toString());
    RateLimitConfig fromYaml = RateLimitConfig.load(yaml.toString());
    assertThat(fromYaml.rules()).isEqualTo(fromProperties.rules());
    assertThat(fromYaml.trustedProxies()).isEqualTo(fromProperties.trustedProxies());
    assertThat(fromYaml.headers()).isEqualTo(fromProperties.headers());
    assertThat(fromYaml.missingKey()).isEqualTo(fromProperties.missingKey());
    assertThat(fromYaml.matchAll()).isEqualTo(fromProperties.matchAll());
  }

  @Test
  void redisExampleParses() throws IOException {
    String section = section();
    List<String> properties = blocks(section, "properties");
    String rules = properties.get(0).lines().filter(l -> l.startsWith("ratelimit.rules"))
        .reduce("", (a, b) -> a + b + "\n");
    Path file = Files.writeString(dir.resolve("redis.properties"), properties.get(1) + rules);
    RateLimitConfig config = RateLimitConfig.load(file.toString());
    assertThat(config.backend()).isEqualTo("redis");
    assertThat(config.redisUrl()).isEqualTo("redis://127.0.0.1:6379");
    assertThat(config.redisKeyPrefix()).isEqualTo("rl");
    assertThat(config.redisTimeout()).hasMillis(200);
  }

  @Test
  void deniedResponseFromTheFile() throws IOException {
    String properties = blocks(section(), "properties").get(2);
    assertThat(properties).contains("ratelimit.denied-response.body=");
    Path file = Files.writeString(dir.resolve("denied.properties"), properties);
    try (TestServer server = TestServer.withConfig(java.util.Map.of("config", file.toString()))) {
      for (int i = 0; i < 10; i++) {
        assertThat(server.get("/v1/x").statusCode()).isEqualTo(200);
      }
      HttpResponse<String> denied = server.get("/v1/x");
      assertThat(denied.statusCode()).isEqualTo(503);
      assertThat(denied.headers().firstValue("Content-Type")).hasValue("application/json");
      assertThat(denied.headers().firstValue("X-Error-Code")).hasValue("RATE_LIMITED");
      assertThat(denied.headers().firstValue("Retry-After")).hasValue("6");
      assertThat(denied.body()).isEqualTo("{\"error\":\"rate_limited\",\"policy\":\"v1-per-ip\",\"retry_in\":6}");
      assertThat(section()).contains("`" + denied.body() + "`");
    }
  }

  @Test
  void deniedResponseInCode() {
    try (RateLimiter limiter = RateLimiter.inMemory()) {
      // --- as in the page
      DeniedResponse busy = DeniedResponse.builder()
          .status(503)
          .contentType("text/plain")
          .body("busy, retry in {{retry-after}} s")
          .build();
      RateLimitFilter filter = RateLimitFilter.builder(limiter)
          .rule(RateLimitRule.builder("v1")
              .path("/v1/**")
              .policy(Policy.parse("10/1m").withName("v1-per-ip"))
              .deniedResponse(busy)                                      // this rule's
              .build())
          .deniedResponse(DeniedResponse.builder().contentType("application/json").build())  // the others'
          .build();
      // ---
      try (TestServer server = TestServer.with(filter)) {
        for (int i = 0; i < 10; i++) {
          assertThat(server.get("/v1/x").statusCode()).isEqualTo(200);
        }
        HttpResponse<String> denied = server.get("/v1/x");
        assertThat(denied.statusCode()).isEqualTo(503);
        assertThat(denied.body()).isEqualTo("busy, retry in 6 s");
      }
    }
  }

  private static String element(String xml, String name) {
    Matcher m = Pattern.compile("<" + name + ">\\s*(.*?)\\s*</" + name + ">").matcher(xml);
    assertThat(m.find()).as("<%s> in %s", name, xml).isTrue();
    return m.group(1);
  }
}

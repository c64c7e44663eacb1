package dev.ratelimit.bench.frontdoor;

import dev.ratelimit.Policy;
import io.github.bucket4j.Bucket;
import java.util.Map;
import org.apache.catalina.util.ServerInfo;
import org.redisson.Redisson;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.EventListener;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * The front-door benchmark's application: {@code GET /work?user=N} answers {@code ok} (text/plain)
 * on Tomcat, behind the limiter that {@code bench.mode} names (see {@link Mode}), with the policy
 * {@code bench.policy} (default {@value #DEFAULT_POLICY}) per user.
 *
 * <pre>{@code
 * java -jar ratelimit-bench/front-door/target/front-door.jar --bench.mode=filter-redis \
 *     --bench.redis-url=redis://127.0.0.1:6390 --server.port=8080
 * }</pre>
 *
 * <p>Other settings: {@code bench.key-prefix} (the Redis key prefix, default {@code fd}), {@code
 * bench.near-cache} (our near-cache, default false, so that every check on Redis goes to Redis).
 */
@SpringBootApplication
public class FrontDoorApplication {
  /** The policy: 100 per 60 s per user key. */
  static final String DEFAULT_POLICY = "100/60s";

  /** Starts the application; see the class comment for its arguments. */
  public static void main(String[] args) {
    start(args);
  }

  /** Starts the application with {@code args} (Spring Boot's {@code --name=value}). */
  static ConfigurableApplicationContext start(String... args) {
    SpringApplication application = new SpringApplication(FrontDoorApplication.class);
    application.addInitializers(new ModeProperties());
    return application.run(args);
  }

  /** One line on standard output once the port is open: what runs, and the versions measured. */
  @EventListener
  void ready(ApplicationReadyEvent event) {
    ConfigurableApplicationContext context = event.getApplicationContext();
    Settings settings = context.getBean(Settings.class);
    int port = context instanceof WebServerApplicationContext web ? web.getWebServer().getPort() : -1;
    System.out.println("front-door ready: mode=" + settings.mode().id() + " policy=" + settings.spec()
        + " port=" + port + " spring-boot=" + SpringBootVersion.getVersion() + " tomcat=" + ServerInfo.getServerNumber()
        + " redisson=" + version(Redisson.class) + " bucket4j=" + version(Bucket.class));
  }

  private static String version(Class<?> type) {
    String version = type.getPackage().getImplementationVersion();
    return version == null ? "?" : version;
  }

  /**
   * What {@code bench.*} says, read once before the context starts: the mode's properties go in
   * last (the command line overrides them) and the {@link Settings} become a bean.
   */
  static final class ModeProperties implements ApplicationContextInitializer<ConfigurableApplicationContext> {
    @Override
    public void initialize(ConfigurableApplicationContext context) {
      ConfigurableEnvironment environment = context.getEnvironment();
      Mode mode = Mode.of(environment.getProperty("bench.mode", Mode.NONE.id()));
      String spec = environment.getProperty("bench.policy", DEFAULT_POLICY);
      Policy policy;
      try {
        policy = Policy.parse(spec);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("bench.policy: " + e.getMessage(), e);
      }
      String redisUrl = environment.getProperty("bench.redis-url");
      if (mode.redis() && (redisUrl == null || redisUrl.isBlank())) {
        throw new IllegalArgumentException("bench.mode=" + mode.id()
            + " needs bench.redis-url, e.g. --bench.redis-url=redis://127.0.0.1:6379");
      }
      Map<String, Object> properties = mode.properties(redisUrl);
      properties.put("ratelimit.policies.per-user.limit", policy.limit());
      properties.put("ratelimit.policies.per-user.window", policy.window().toMillis() + "ms");
      environment.getPropertySources().addLast(new MapPropertySource("bench.mode", properties));
      context.getBeanFactory().registerSingleton("benchSettings", new Settings(mode, spec, policy,
          redisUrl, environment.getProperty("bench.key-prefix", "fd")));
    }
  }

  /**
   * The benchmark's settings.
   *
   * @param spec the policy as given, e.g. {@code 100/60s}
   * @param keyPrefix the first part of every Redis key, so that rows and rounds never share state
   */
  record Settings(Mode mode, String spec, Policy policy, String redisUrl, String keyPrefix) {}
}

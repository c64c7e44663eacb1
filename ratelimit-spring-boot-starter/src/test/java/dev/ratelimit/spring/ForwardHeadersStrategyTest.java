package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.servlet.RateLimitFilter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServer;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.server.servlet.ServletWebServerFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.mock.env.MockEnvironment;

/**
 * The client IP under each of Spring Boot's {@code server.forward-headers-strategy} values, in a
 * real Tomcat: {@code framework} (Spring's ForwardedHeaderFilter rewrites the remote address and
 * hides the headers before any other filter) and {@code native} (Tomcat's RemoteIpValve does so
 * before every filter, trusting loopback and private addresses by default) must not let a client
 * on loopback choose its bucket, unless {@code ratelimit.trusted-proxies} trusts loopback.
 */
class ForwardHeadersStrategyTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private static ConfigurableApplicationContext start(String strategy, String... properties) {
    List<String> all = new ArrayList<>(List.of("server.port=0", "server.forward-headers-strategy=" + strategy,
        "ratelimit.policies.one.limit=1", "ratelimit.policies.one.window=1m",
        "ratelimit.filter.rules[0].name=open",
        "ratelimit.filter.rules[0].paths=/open/**",
        "ratelimit.filter.rules[0].policies=one",
        "ratelimit.filter.rules[0].key=#clientIp"));
    all.addAll(List.of(properties));
    return new SpringApplicationBuilder(WebApp.class).properties(all.toArray(String[]::new)).run();
  }

  /** A GET from 127.0.0.1 carrying {@code header: value}. */
  private static int get(ConfigurableApplicationContext app, String path, String header, String value)
      throws Exception {
    int port = ((WebServerApplicationContext) app).getWebServer().getPort();
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .header(header, value).build();
    return HTTP.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  @ParameterizedTest
  @ValueSource(strings = {"none", "framework", "native"})
  void aForgedHeaderFromAnUntrustedPeerChangesNothing(String strategy) throws Exception {
    List<String> warnings = new CopyOnWriteArrayList<>();
    Handler capture = new Handler() {
      @Override
      public void publish(LogRecord record) {
        warnings.add(record.getMessage());
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    Logger logger = Logger.getLogger(RateLimitFilter.class.getName());
    logger.addHandler(capture);
    try (ConfigurableApplicationContext app = start(strategy)) {
      // the filter: 1 a minute per #clientIp; each forged address would be a bucket of its own
      assertThat(get(app, "/open/1", "X-Forwarded-For", "203.0.113.1")).isEqualTo(200);
      assertThat(get(app, "/open/2", "X-Forwarded-For", "203.0.113.2")).as("the peer's bucket, used up")
          .isEqualTo(429);
      assertThat(get(app, "/open/3", "Forwarded", "for=203.0.113.3")).isEqualTo(429);
      // @RateLimited(key = "#clientIp", limit = 1)
      assertThat(get(app, "/ip", "Forwarded", "for=203.0.113.4")).isEqualTo(200);
      assertThat(get(app, "/ip", "X-Forwarded-For", "203.0.113.5")).isEqualTo(429);
      assertThat(get(app, "/ip", "Forwarded", "for=203.0.113.6")).isEqualTo(429);
    } finally {
      logger.removeHandler(capture);
    }
    assertThat(warnings).as("the undeclared proxy is pointed out").anySatisfy(warning -> assertThat(warning)
        .contains("requests from 127.0.0.1 carry X-Forwarded-For").contains("ratelimit.trusted-proxies"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"none", "framework", "native"})
  void theHeadersOfATrustedProxyAreRead(String strategy) throws Exception {
    try (ConfigurableApplicationContext app = start(strategy, "ratelimit.trusted-proxies=127.0.0.1")) {
      assertThat(get(app, "/open/1", "X-Forwarded-For", "203.0.113.1")).isEqualTo(200);
      assertThat(get(app, "/open/2", "X-Forwarded-For", "203.0.113.2")).isEqualTo(200);
      assertThat(get(app, "/open/3", "Forwarded", "for=203.0.113.3")).isEqualTo(200);
      assertThat(get(app, "/open/4", "Forwarded", "for=203.0.113.1")).as("203.0.113.1's bucket, used up")
          .isEqualTo(429);
      assertThat(get(app, "/ip", "Forwarded", "for=\"[2001:db8::1]:4711\"")).isEqualTo(200);
      assertThat(get(app, "/ip", "X-Forwarded-For", "203.0.113.5")).isEqualTo(200);
      assertThat(get(app, "/ip", "X-Forwarded-For", "2001:db8::1")).isEqualTo(429);
    }
  }

  /**
   * A servlet web server other than Tomcat, serving nothing: it stands in for Jetty (whose Spring
   * Boot module this build does not have), where {@code native} rewrites the address unseen.
   */
  @Configuration(proxyBeanMethods = false)
  static class OtherServer {
    @Bean
    ServletWebServerFactory otherServer() {
      return initializers -> new WebServer() {
        @Override
        public void start() {}

        @Override
        public void stop() {}

        @Override
        public int getPort() {
          return -1;
        }
      };
    }
  }

  private static ConfigurableApplicationContext startOther(String... properties) {
    return new SpringApplicationBuilder(WebApp.class, OtherServer.class).properties(properties).run();
  }

  @Test
  void nativeOnAServerOtherThanTomcatFailsStartUpNamingTheFix() {
    assertThatThrownBy(() -> startOther("server.forward-headers-strategy=native").close())
        .rootCause().hasMessageContaining("server.forward-headers-strategy is native (set)")
        .hasMessageContaining("not what ratelimit.trusted-proxies allow")
        .hasMessageContaining("Set server.forward-headers-strategy=framework");
    // unset on a cloud platform: Boot has the server read the headers
    assertThatThrownBy(() -> startOther("spring.main.cloud-platform=kubernetes").close())
        .rootCause().hasMessageContaining("server.forward-headers-strategy is native (unset, so native on KUBERNETES)");
  }

  @ParameterizedTest
  @ValueSource(strings = {"server.forward-headers-strategy=framework", "server.forward-headers-strategy=none",
      "spring.main.cloud-platform=none", "spring.main.cloud-platform=kubernetes,server.forward-headers-strategy=none"})
  void otherStrategiesOnAServerOtherThanTomcatAreFine(String properties) {
    MockEnvironment environment = new MockEnvironment();
    for (String property : properties.split(",")) {
      environment.setProperty(property.substring(0, property.indexOf('=')), property.substring(property.indexOf('=') + 1));
    }
    ServerForwardingConfiguration.NativeForwardingCheck check = new ServerForwardingConfiguration.NativeForwardingCheck(environment);
    assertThatCode(() -> check.customize(new OtherServer().otherServer())).doesNotThrowAnyException();
  }

  @Test
  void nativeOnTomcatIsFineTheValveKeepsWhatArrived() {
    MockEnvironment environment = new MockEnvironment().withProperty("server.forward-headers-strategy", "native");
    TomcatServletWebServerFactory tomcat = new TomcatServletWebServerFactory();
    tomcat.addEngineValves(new org.apache.catalina.valves.RemoteIpValve());
    assertThatCode(() -> new ServerForwardingConfiguration.NativeForwardingCheck(environment).customize(tomcat))
        .doesNotThrowAnyException();
    new ServerForwardingConfiguration.FirstValve().customize(tomcat);
    assertThat(tomcat.getEngineValves()).extracting(valve -> valve.getClass().getSimpleName())
        .containsExactly("ArrivalValve", "RemoteIpValve");
  }

  @Test
  void theValveAndTheCheckAreForServletWebApplications() {
    var web = new WebApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, AopAutoConfiguration.class));
    web.run(context -> assertThat(context).hasBean("rateLimitArrivalValve").hasBean("rateLimitNativeForwardingCheck"));
    web.withClassLoader(new FilteredClassLoader("org.apache.catalina"))
        .run(context -> assertThat(context).doesNotHaveBean("rateLimitArrivalValve")
            .hasBean("rateLimitNativeForwardingCheck"));
    web.withPropertyValues("ratelimit.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean("rateLimitArrivalValve")
            .doesNotHaveBean("rateLimitNativeForwardingCheck"));
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, AopAutoConfiguration.class))
        .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("rateLimitArrivalValve")
            .doesNotHaveBean("rateLimitNativeForwardingCheck"));
  }
}

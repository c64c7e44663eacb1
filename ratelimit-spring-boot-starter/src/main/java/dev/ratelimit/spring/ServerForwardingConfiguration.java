package dev.ratelimit.spring;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.catalina.Valve;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.cloud.CloudPlatform;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.server.servlet.ServletWebServerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Keeps {@code ratelimit.trusted-proxies} the only judge of {@code #clientIp} whatever {@code
 * server.forward-headers-strategy} says. {@code framework} needs nothing here: Spring's
 * ForwardedHeaderFilter wraps the request, and the client IP sees through wrappers. {@code native}
 * rewrites the request inside the server, before any filter: on Tomcat an {@link ArrivalValve}
 * ahead of the {@code RemoteIpValve} keeps what arrived; on another server the start-up fails.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(name = "org.springframework.boot.web.server.servlet.ServletWebServerFactory")
class ServerForwardingConfiguration {
  private static final String TOMCAT_FACTORY = "org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory";

  @Bean
  WebServerFactoryCustomizer<ServletWebServerFactory> rateLimitNativeForwardingCheck(Environment environment) {
    return new NativeForwardingCheck(environment);
  }

  /** Refuses {@code native} on a server other than Tomcat, where what arrived cannot be kept. */
  static final class NativeForwardingCheck implements WebServerFactoryCustomizer<ServletWebServerFactory> {
    private final Environment environment;

    NativeForwardingCheck(Environment environment) {
      this.environment = environment;
    }

    @Override
    public void customize(ServletWebServerFactory factory) {
      if (isTomcat(factory) || !nativeForwarding(environment)) {
        return;
      }
      String strategy = environment.getProperty("server.forward-headers-strategy");
      throw new IllegalStateException("server.forward-headers-strategy is native ("
          + (strategy == null ? "unset, so native on " + CloudPlatform.getActive(environment) : "set") + "): "
          + factory.getClass().getName() + " takes the client's address from forwarding headers inside the"
          + " server, before any filter and from any peer, so #clientIp would be whatever a client sends, not"
          + " what ratelimit.trusted-proxies allow. Set server.forward-headers-strategy=framework (Spring then"
          + " reads these headers in a filter, which #clientIp sees through) or none");
    }

    private static boolean isTomcat(ServletWebServerFactory factory) {
      ClassLoader loader = ServerForwardingConfiguration.class.getClassLoader();
      return ClassUtils.isPresent(TOMCAT_FACTORY, loader)
          && ClassUtils.resolveClassName(TOMCAT_FACTORY, loader).isInstance(factory);
    }
  }

  /** Whether Boot has the server read forwarding headers: as Boot decides, also when the property is unset. */
  static boolean nativeForwarding(Environment environment) {
    String strategy = environment.getProperty("server.forward-headers-strategy");
    if (strategy == null) {
      CloudPlatform platform = CloudPlatform.getActive(environment);
      return platform != null && platform.isUsingForwardHeaders();
    }
    return strategy.trim().toLowerCase(Locale.ROOT).equals("native");
  }

  /** Embedded Tomcat: an {@link ArrivalValve} first in the engine's pipeline. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = {"org.apache.catalina.valves.ValveBase", TOMCAT_FACTORY})
  static class TomcatArrival {
    @Bean
    WebServerFactoryCustomizer<TomcatServletWebServerFactory> rateLimitArrivalValve() {
      return new FirstValve();
    }
  }

  /**
   * Puts an {@link ArrivalValve} first. Runs last, after the customizers that add valves: Boot's own
   * adds a {@code RemoteIpValve} for {@code native} (also when unset, on a cloud platform such as
   * Kubernetes) or for any {@code server.tomcat.remoteip} header; it believes loopback and private
   * peers by default, rewrites the remote address and removes {@code X-Forwarded-For}.
   */
  static final class FirstValve implements WebServerFactoryCustomizer<TomcatServletWebServerFactory>, Ordered {
    @Override
    public void customize(TomcatServletWebServerFactory factory) {
      List<Valve> valves = new ArrayList<>();
      valves.add(new ArrivalValve());
      valves.addAll(factory.getEngineValves());
      factory.setEngineValves(valves);
    }

    @Override
    public int getOrder() {
      return Ordered.LOWEST_PRECEDENCE;
    }
  }
}

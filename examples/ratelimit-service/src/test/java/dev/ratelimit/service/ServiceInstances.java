package dev.ratelimit.service;

import java.util.HashMap;
import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * Starts the service as its main would, on a random port, with the given environment variables
 * in the place of the process environment (so that relaxed binding treats them exactly as it
 * treats {@code RATELIMIT_REDIS_URL=... java -jar ...}).
 */
final class ServiceInstances {
  private ServiceInstances() {}

  static ConfigurableApplicationContext start(Map<String, String> environmentVariables) {
    Map<String, Object> variables = new HashMap<>(environmentVariables);
    variables.putIfAbsent("SERVER_PORT", "0");
    StandardEnvironment environment = new StandardEnvironment();
    environment.getPropertySources().replace(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
        new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, variables));
    SpringApplication application = new SpringApplication(RateLimitServiceApplication.class);
    application.setEnvironment(environment);
    return application.run();
  }

  static int port(ConfigurableApplicationContext context) {
    return ((WebServerApplicationContext) context).getWebServer().getPort();
  }
}

package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.servlet.DelegatingFilterProxyRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configuration.EnableWebSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * With Spring Security, the filter runs before its chain by default, so that a login answered by
 * Spring Security itself is limited too: the README's login rule, against a form login.
 */
class SecurityFilterOrderTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();

  /** A form login as an application has it, Spring Security's chain registered as Boot registers it (-100). */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @EnableWebSecurity
  static class SecuredApp {
    @Bean
    SecurityFilterChain security(HttpSecurity http) throws Exception {
      return http.authorizeHttpRequests(requests -> requests.anyRequest().authenticated())
          .formLogin(login -> { })
          .csrf(csrf -> csrf.disable())
          .build();
    }

    @Bean
    InMemoryUserDetailsManager users() {
      return new InMemoryUserDetailsManager(User.withUsername("alice").password("{noop}right").roles("USER").build());
    }

    @Bean
    DelegatingFilterProxyRegistrationBean securityFilterChainRegistration() {
      DelegatingFilterProxyRegistrationBean registration = new DelegatingFilterProxyRegistrationBean("springSecurityFilterChain");
      registration.setOrder(-100);
      return registration;
    }
  }

  private static ConfigurableApplicationContext start(String... more) {
    String[] properties = {"server.port=0",
        "ratelimit.policies.login.limit=3", "ratelimit.policies.login.window=5m",
        "ratelimit.filter.rules[0].name=login",
        "ratelimit.filter.rules[0].paths=/login",
        "ratelimit.filter.rules[0].methods=POST",
        "ratelimit.filter.rules[0].policies=login"};
    return new SpringApplicationBuilder(SecuredApp.class)
        .properties(properties).properties(more).run();
  }

  private static HttpResponse<String> login(ConfigurableApplicationContext app, String password) throws Exception {
    int port = ((WebServerApplicationContext) app).getWebServer().getPort();
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/login"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .POST(HttpRequest.BodyPublishers.ofString("username=alice&password=" + password)).build();
    return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void passwordGuessesAnsweredBySpringSecurityAreLimited() throws Exception {
    try (ConfigurableApplicationContext app = start()) {
      for (int i = 0; i < 3; i++) {
        HttpResponse<String> guess = login(app, "guess-" + i);
        assertThat(guess.statusCode()).as("Spring Security's answer to a wrong password").isEqualTo(302);
        assertThat(guess.headers().firstValue("Location")).hasValueSatisfying(l -> assertThat(l).endsWith("/login?error"));
      }
      HttpResponse<String> limited = login(app, "guess-4");
      assertThat(limited.statusCode()).as("the fourth never reaches Spring Security").isEqualTo(429);
      assertThat(limited.body()).contains("\"login\"");
      assertThat(login(app, "right").statusCode()).as("the right password too, until the window allows").isEqualTo(429);
    }
  }

  @Test
  void aRuleKeyedByThePrincipalMustRunAfterSpringSecurity() {
    assertThatThrownBy(() -> start("ratelimit.filter.rules[0].key=#principal").close())
        .hasStackTraceContaining("ratelimit.filter.rules[0] reads the user")
        .hasStackTraceContaining("ratelimit.filter.order above -100");
    assertThatThrownBy(() -> start("ratelimit.filter.rules[0].key=#request.remoteUser ?: #clientIp").close())
        .hasStackTraceContaining("ratelimit.filter.rules[0] reads the user");
    assertThatThrownBy(() -> start("ratelimit.filter.rules[0].skip-when=#principal == 'admin'").close())
        .as("a condition too").hasStackTraceContaining("ratelimit.filter.rules[0] reads the user");
    try (ConfigurableApplicationContext app = start("ratelimit.filter.rules[0].key=#principal",
        "ratelimit.filter.order=10")) {
      assertThat(app.isRunning()).as("after Spring Security the principal is known").isTrue();
    }
  }
}

package dev.ratelimit.spring.nonweb;

import dev.ratelimit.annotation.RateLimitExceededException;
import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.spring.RateLimitAutoConfiguration;
import dev.ratelimit.spring.RateLimitEndpointAutoConfiguration;
import dev.ratelimit.spring.RateLimitHealthAutoConfiguration;
import dev.ratelimit.spring.RateLimitMetricsAutoConfiguration;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * An application without the servlet API (a batch job, a message listener), run in a JVM of its
 * own by {@code NonWebApplicationTest}: every auto-configuration of the starter, and one
 * {@code @RateLimited} bean called three times under a limit of two. Prints what it saw.
 */
@SpringBootConfiguration
@ImportAutoConfiguration({RateLimitAutoConfiguration.class, RateLimitMetricsAutoConfiguration.class,
    RateLimitEndpointAutoConfiguration.class, RateLimitHealthAutoConfiguration.class})
public class NonWebApp {
  /** An outbound client, limited per user. */
  public static class Client {
    @RateLimited(limit = 2, window = "1m", key = "#user")
    public String call(String user) {
      return "ok";
    }
  }

  @Bean
  Client client() {
    return new Client();
  }

  public static void main(String[] args) {
    System.out.println("servlet API present: " + present("jakarta.servlet.http.HttpServletRequest"));
    SpringApplication app = new SpringApplication(NonWebApp.class);
    app.setWebApplicationType(WebApplicationType.NONE);
    app.setLogStartupInfo(false);
    try (ConfigurableApplicationContext context = app.run("--spring.main.banner-mode=off")) {
      Client client = context.getBean(Client.class);
      StringBuilder seen = new StringBuilder("calls:");
      for (String user : new String[] {"ann", "ann", "ann", "bob"}) {
        String answer;
        try {
          answer = client.call(user);
        } catch (RateLimitExceededException e) {
          answer = "denied";
        }
        seen.append(' ').append(answer);
      }
      System.out.println(seen);
    }
  }

  private static boolean present(String type) {
    try {
      Class.forName(type, false, NonWebApp.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }
}

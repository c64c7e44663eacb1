package dev.ratelimit.example.boot;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A Spring Boot application limited by the ratelimit starter: {@code @RateLimited} on controller
 * methods ({@link ApiController}) and on an outbound client ({@link QuoteClient}), and a filter
 * rule from {@code application.yml}. The backend is in memory, or Redis when
 * {@code spring.data.redis.url} is set.
 */
@SpringBootApplication
public class DemoApplication {

  /** Starts the demo on {@code server.port} (8080 unless told otherwise). */
  public static void main(String[] args) {
    SpringApplication.run(DemoApplication.class, args);
  }
}

package dev.ratelimit.example.webflux;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A Spring WebFlux application on Reactor Netty, limited two ways: the reactive filter's rules in
 * application.yml ({@code GET /work?user=N}, per user) and {@code @RateLimited} on a method that
 * returns a {@code Mono} ({@link Greetings}), checked per subscription. Redis when {@code
 * ratelimit.redis.url} is set, else in memory.
 */
@SpringBootApplication
public class WebFluxDemoApplication {
  public static void main(String[] args) {
    SpringApplication.run(WebFluxDemoApplication.class, args);
  }
}

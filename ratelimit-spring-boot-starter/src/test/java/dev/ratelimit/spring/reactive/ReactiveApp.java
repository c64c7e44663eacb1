package dev.ratelimit.spring.reactive;

import dev.ratelimit.annotation.RateLimited;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.stereotype.Service;
import org.springframework.web.cors.CorsConfiguration;
import org.springframework.web.cors.reactive.CorsConfigurationSource;
import org.springframework.web.cors.reactive.UrlBasedCorsConfigurationSource;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** A WebFlux application: a filter-limited endpoint and reactive {@code @RateLimited} methods (member classes: registered as beans). */
@SpringBootConfiguration
@EnableAutoConfiguration
public class ReactiveApp {
  /** The application's CORS configuration, which a 429 of the reactive filter carries too. */
  @Bean
  CorsConfigurationSource corsConfigurationSource() {
    CorsConfiguration cors = new CorsConfiguration();
    cors.addAllowedOrigin("https://app.example");
    cors.addExposedHeader("Retry-After");
    UrlBasedCorsConfigurationSource source = new UrlBasedCorsConfigurationSource();
    source.registerCorsConfiguration("/**", cors);
    return source;
  }

  /** Reactive methods limited per subscription. */
  @Service
  public static class Greetings {
    private final AtomicInteger calls = new AtomicInteger();

    /** How many times a method body ran (a method: the bean is a proxy). */
    public int calls() {
      return calls.get();
    }

    @RateLimited(key = "#name", limit = 2, window = "1m", name = "greet")
    public Mono<String> greet(String name) {
      calls.incrementAndGet();
      return Mono.fromSupplier(() -> "hello " + name);
    }

    @RateLimited(key = "#name", limit = 1, window = "1m", name = "stream")
    public Flux<String> stream(String name) {
      calls.incrementAndGet();
      return Flux.just("a", "b", "c");
    }

    @RateLimited(limit = 1, window = "1m", name = "future")
    public CompletionStage<String> future() {
      calls.incrementAndGet();
      return CompletableFuture.completedFuture("done");
    }

    @RateLimited(key = "'wide:' + #name", limit = 5, window = "1h", name = "wide", mode = RateLimited.Mode.WAIT,
        maxWait = "5s")
    @RateLimited(key = "'narrow:' + #name", limit = 1, window = "300ms", name = "narrow",
        mode = RateLimited.Mode.WAIT, maxWait = "5s")
    public Mono<String> twoKeys(String name) {
      return Mono.just("both " + name);
    }

    @RateLimited(key = "#name", limit = 1, window = "300ms", name = "patient", mode = RateLimited.Mode.WAIT,
        maxWait = "5s")
    public Mono<String> patient(String name) {
      calls.incrementAndGet();
      return Mono.just("served " + name);
    }
  }

  /** Annotated WebFlux endpoints. */
  @RestController
  public static class Endpoints {
    private final Greetings greetings;

    Endpoints(Greetings greetings) {
      this.greetings = greetings;
    }

    @GetMapping("/api/hello")
    public Mono<String> hello() {
      return Mono.just("hi");
    }

    @GetMapping("/cors/hello")
    public Mono<String> cors() {
      return Mono.just("hi");
    }

    /** Keyed on the exchange's request variables, as a servlet controller method may be. */
    @RateLimited(key = "#clientIp + ' ' + #request.headers.getFirst('X-Api-Key') + ' ' + #principal", limit = 1,
        window = "1m", name = "per-client")
    @GetMapping("/keyed")
    public Mono<String> keyed() {
      return Mono.just("ok");
    }

    @GetMapping("/greet/{name}")
    public Mono<String> greet(@PathVariable String name) {
      return greetings.greet(name);
    }
  }
}

package dev.ratelimit.example.webflux;

import dev.ratelimit.annotation.RateLimited;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Mono;

/** A reactive service: each subscription to a greeting is one check of the user's limit. */
@Service
public class Greetings {
  @RateLimited(key = "#user", policy = "greetings")
  public Mono<String> greet(String user) {
    return Mono.fromSupplier(() -> "hello " + user);
  }
}

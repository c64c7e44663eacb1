package dev.ratelimit.example.webflux;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** The endpoints: {@code /work} is limited by the filter's rule, {@code /greet/{user}} by {@link Greetings}. */
@RestController
public class DemoController {
  private final Greetings greetings;

  DemoController(Greetings greetings) {
    this.greetings = greetings;
  }

  @GetMapping("/work")
  public Mono<String> work(@RequestParam String user) {
    return Mono.just("done for " + user);
  }

  @GetMapping("/greet/{user}")
  public Mono<String> greet(@PathVariable String user) {
    return greetings.greet(user);
  }
}

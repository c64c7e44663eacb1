package dev.ratelimit.bench.frontdoor;

import dev.ratelimit.annotation.RateLimited;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** The same endpoint limited by {@code @RateLimited}, per user, with the policy {@code per-user}. */
@RestController
@ConditionalOnProperty(name = "bench.annotation", havingValue = "true")
class RateLimitedWorkController {
  @GetMapping(path = "/work", produces = MediaType.TEXT_PLAIN_VALUE)
  @RateLimited(key = "#user", policy = "per-user")
  String work(@RequestParam String user) {
    return "ok";
  }
}

package dev.ratelimit.spring;

// The application code of fallbackMethod in README.md and docs/spring-boot.md, line for line
// (FallbackStarterTest checks that the pages show these lines and runs them over HTTP).

import dev.ratelimit.annotation.RateLimitExceededException;
import dev.ratelimit.annotation.RateLimited;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

@RestController
class QuoteController {
  @GetMapping("/quotes/{symbol}")
  @RateLimited(key = "#clientIp", limit = 2, window = "1m", fallbackMethod = "cached")
  String quote(@PathVariable String symbol) {
    return "fresh " + symbol;
  }

  // answers a refused call instead of the 429: the same parameters, the exception optional
  String cached(String symbol, RateLimitExceededException e) {
    return "cached " + symbol + ", fresh again in " + e.decision().retryAfter().toSeconds() + " s";
  }
}

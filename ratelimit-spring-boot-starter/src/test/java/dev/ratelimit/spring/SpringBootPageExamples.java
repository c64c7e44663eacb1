package dev.ratelimit.spring;

// The application code of docs/spring-boot.md, line for line (ReadmeExamplesTest checks that the
// page shows these lines and runs them); the page leaves the bodies out.

import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.annotation.RateLimited.Mode;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

record Order(String item) {}

record Quote(String symbol) {}

@RestController
class OrderController {
  @PostMapping("/orders/{userId}")
  @RateLimited(key = "#userId", policy = "api")                        // a policy from configuration
  @RateLimited(key = "#userId", limit = 5, window = "1m", name = "burst") // and an inline one, checked together
  Order place(@PathVariable String userId, @RequestBody Order order) {
    return order;
  }
}

@Component
class PartnerClient {                                                  // outbound: wait for our turn
  @RateLimited(key = "'partner-api'", limit = 5, window = "1s", burst = 1, mode = Mode.WAIT, maxWait = "10s")
  Quote quote(String symbol) {
    return new Quote(symbol);
  }
}

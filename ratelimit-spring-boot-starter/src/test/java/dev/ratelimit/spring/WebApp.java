package dev.ratelimit.spring;

import dev.ratelimit.annotation.RateLimited;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/** A small web application for the MVC and real-server tests. */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({WebApp.Greetings.class, WebApp.Partner.class})
class WebApp {

  /** An outbound client called while serving a request: one method paced (WAIT), one refusing (REJECT). */
  @Component
  static class Partner {
    @RateLimited(key = "'partner-api'", limit = 50, window = "1h", mode = RateLimited.Mode.WAIT, maxWait = "5s",
        name = "partner")
    String quote(String symbol) {
      return "quote " + symbol;
    }

    @RateLimited(key = "'partner-rates'", limit = 50, window = "1h", name = "partner-rates")
    String rates() {
      return "rates";
    }
  }

  @RestController
  static class Greetings {
    private final Partner partner;

    Greetings(Partner partner) {
      this.partner = partner;
    }

    @GetMapping("/relay/{user}")
    @RateLimited(key = "#user", limit = 3, window = "1m", name = "relay")
    String relay(@PathVariable String user) {
      return partner.quote(user);
    }

    @GetMapping("/quote/{symbol}")
    String quote(@PathVariable String symbol) {
      return partner.quote(symbol);
    }

    @GetMapping("/rates")
    String rates() {
      return partner.rates();
    }

    @GetMapping("/paced/{user}")
    @RateLimited(key = "#user", limit = 5, window = "1m", name = "paced", mode = RateLimited.Mode.WAIT, maxWait = "1s")
    String paced(@PathVariable String user) {
      return "paced " + user;
    }

    @GetMapping("/hello/{user}")
    @RateLimited(key = "#user", limit = 2, window = "1m", name = "hello")
    String hello(@PathVariable String user) {
      return "hello " + user;
    }

    @GetMapping("/ip")
    @RateLimited(key = "#clientIp", limit = 1, window = "1m", name = "per-ip")
    String ip() {
      return "ip";
    }

    @GetMapping("/net")
    @RateLimited(key = "#clientNetwork", limit = 1, window = "1m", name = "per-network")
    String net() {
      return "net";
    }

    @GetMapping("/open/{id}")
    String open(@PathVariable String id) {
      return "open " + id;
    }
  }
}

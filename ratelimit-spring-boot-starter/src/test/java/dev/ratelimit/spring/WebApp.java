package dev.ratelimit.spring;

import dev.ratelimit.annotation.RateLimited;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/** A small web application for the MVC and real-server tests. */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(WebApp.Greetings.class)
class WebApp {

  @RestController
  static class Greetings {
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

    @GetMapping("/open/{id}")
    String open(@PathVariable String id) {
      return "open " + id;
    }
  }
}

package dev.ratelimit.spring;

// The application code of countWhen in README.md and docs/spring-boot.md, line for line
// (CountWhenStarterTest checks that the pages show these lines and runs them over HTTP).

import dev.ratelimit.annotation.RateLimited;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

@RestController
class LoginController {
  @PostMapping("/login")
  @RateLimited(key = "#clientIp", limit = 5, window = "15m", name = "failed-logins",
      countWhen = "#exception != null")                    // only failed logins count
  String login(@RequestParam String user, @RequestParam String password) {
    if (!"right".equals(password)) {
      throw new BadCredentials();                          // answered 401
    }
    return "welcome " + user;
  }
}

@ResponseStatus(HttpStatus.UNAUTHORIZED)
class BadCredentials extends RuntimeException {
  private static final long serialVersionUID = 1L;
}

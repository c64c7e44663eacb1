package dev.ratelimit.example.boot;

import dev.ratelimit.annotation.RateLimited;
import java.util.Map;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Endpoints limited with {@code @RateLimited}. The policies ({@code per-user}, {@code per-ip}, ...)
 * are named in {@code application.yml}; a denied call answers 429 with {@code Retry-After}, the
 * {@code RateLimit}/{@code RateLimit-Policy} headers and a problem+json body, which the starter
 * writes. Allowed calls carry the limit headers too.
 *
 * <p>The user comes from an {@code X-User} header to keep the demo self-contained; with Spring
 * Security, key on {@code #principal} (the authenticated user's name) instead.
 */
@RestController
class ApiController {
  private final QuoteClient quotes;

  ApiController(QuoteClient quotes) {
    this.quotes = quotes;
  }

  /** Per user: the key is read from the request by SpEL, 5 calls a minute for each user. */
  @GetMapping("/api/profile")
  @RateLimited(key = "#request.getHeader('X-User')", policy = "per-user")
  Map<String, String> profile(@RequestHeader(name = "X-User", required = false) String user) {
    return Map.of("user", user == null ? "anonymous" : user);
  }

  /** Per client IP ({@code #clientIp} honours {@code ratelimit.trusted-proxies}): 10 a minute. */
  @GetMapping("/api/search")
  @RateLimited(key = "#clientIp", policy = "per-ip")
  Map<String, String> search(@RequestParam(defaultValue = "") String q) {
    return Map.of("query", q, "results", "none, it is a demo");
  }

  /**
   * Two policies on one method, keyed on a method argument, checked together (all or nothing): 2
   * every 10 seconds and 5 an hour per user. The one that is exhausted denies, and the 429 names it
   * in {@code violated-policies}.
   */
  @PostMapping("/api/reports")
  @RateLimited(key = "#user", policy = "reports-burst")
  @RateLimited(key = "#user", policy = "reports-hourly")
  Map<String, String> createReport(@RequestHeader("X-User") String user) {
    return Map.of("user", user, "report", "queued");
  }

  /**
   * A quote from the partner API. Not limited itself: the outbound {@link QuoteClient} waits for
   * its turn, so a burst here becomes calls to the partner spaced as the partner allows.
   */
  @GetMapping("/api/quotes/{symbol}")
  Quote quote(@PathVariable String symbol) {
    return quotes.quote(symbol);
  }

  /** Not annotated: the filter rule {@code public} in {@code application.yml} limits {@code /public/**}. */
  @GetMapping("/public/status")
  Map<String, String> status() {
    return Map.of("status", "up");
  }
}

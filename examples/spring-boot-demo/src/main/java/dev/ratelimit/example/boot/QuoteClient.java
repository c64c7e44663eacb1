package dev.ratelimit.example.boot;

import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.annotation.RateLimited.Mode;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;
import org.springframework.web.client.RestClient;

/**
 * A client of a partner's quote API, which allows us 2 calls a second. In {@link Mode#WAIT} a call
 * over the limit waits for its turn instead of failing (up to {@code maxWait}, then it throws
 * {@link dev.ratelimit.annotation.RateLimitExceededException}), so however our own traffic bursts,
 * the partner sees at most the calls the {@code partner-api} policy allows, evenly spaced (burst 1:
 * one call every 500 ms). The key is a constant: one budget for the whole application, or for
 * every instance when the backend is Redis.
 */
@Component
public class QuoteClient {
  private final RestClient http;

  /** A client of the partner at {@code demo.partner.base-url}. */
  public QuoteClient(RestClient.Builder builder, @Value("${demo.partner.base-url}") String baseUrl) {
    this.http = builder.baseUrl(baseUrl).build();
  }

  /** The partner's quote for {@code symbol}; waits while the partner's budget is used up. */
  @RateLimited(key = "'partner-api'", policy = "partner-api", mode = Mode.WAIT, maxWait = "10s")
  public Quote quote(String symbol) {
    return http.get().uri("/quotes/{symbol}", symbol).retrieve().body(Quote.class);
  }
}

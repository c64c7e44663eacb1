package dev.ratelimit.webflux;

import dev.ratelimit.Decision;
import dev.ratelimit.internal.http.LimitHeaders;
import dev.ratelimit.http.DeniedResponse;
import dev.ratelimit.http.HeaderOptions;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * The HTTP side of decisions on a {@link ServerWebExchange}: the same limit headers, {@code
 * Retry-After} and denied responses as the servlet filter's {@code RateLimitResponses} writes (one
 * implementation of both). Each method records the decisions on the exchange, so that a filter rule
 * and a {@code @RateLimited} method that check one request list every policy in the last headers
 * written, once; when any of them is degraded (the failure mode decided), no limit header is sent.
 */
public final class ExchangeResponses {
  /** The exchange attribute holding the decisions whose limit headers were written for it. */
  static final String DECISIONS = ExchangeResponses.class.getName() + ".decisions";

  private ExchangeResponses() {}

  /**
   * Sets the limit headers {@code options} asks for, describing {@code decisions} with every
   * decision written for the exchange before.
   */
  public static void writeHeaders(ServerWebExchange exchange, List<Decision> decisions, HeaderOptions options) {
    Objects.requireNonNull(options, "options");
    List<Decision> all = record(exchange, decisions);
    LimitHeaders.fields(all, options.draft(), options.legacy(), Long.MAX_VALUE)
        .forEach(exchange.getResponse().getHeaders()::set);
  }

  /**
   * The limit headers of a denied response ({@link #writeHeaders} with no {@code t} beyond the
   * response's {@code Retry-After}), with those written for the exchange before, for the filter to
   * set before its {@link DeniedExchangeHandler} runs.
   */
  static void writeHeadersOfDenial(ServerWebExchange exchange, List<Decision> decisions, HeaderOptions options) {
    List<Decision> all = record(exchange, decisions);
    long retry = LimitHeaders.ceilSeconds(LimitHeaders.retryAfterMicros(all));
    LimitHeaders.fields(all, options.draft(), options.legacy(), retry).forEach(exchange.getResponse().getHeaders()::set);
  }

  /**
   * Writes the denied response {@code configured} describes for {@code decisions} and every
   * decision written for the exchange before: the limit headers, {@code Retry-After}, {@code
   * Cache-Control: no-store}, the extra headers, the status and the body. Completes at once, writing
   * nothing, when the response is already committed.
   */
  public static Mono<Void> writeDenied(ServerWebExchange exchange, List<Decision> decisions, HeaderOptions options,
      DeniedResponse configured) {
    Objects.requireNonNull(options, "options");
    Objects.requireNonNull(configured, "configured");
    ServerHttpResponse response = exchange.getResponse();
    if (response.isCommitted()) {
      return Mono.empty();
    }
    List<Decision> all = record(exchange, decisions);
    HttpHeaders headers = response.getHeaders();
    LimitHeaders.deniedFields(all, options.draft(), options.legacy()).forEach(headers::set);
    configured.headers().forEach(headers::set);
    response.setStatusCode(HttpStatusCode.valueOf(configured.status()));
    DeniedResponse.Rendered rendered = configured.rendered(all);
    return body(response, rendered.contentType(), rendered.body());
  }

  /** Writes {@code body} as UTF-8 with {@code contentType} (none when null). */
  static Mono<Void> body(ServerHttpResponse response, String contentType, String body) {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    if (contentType != null) {
      response.getHeaders().set(HttpHeaders.CONTENT_TYPE, contentType);
    }
    response.getHeaders().setContentLength(bytes.length);
    return bytes.length == 0 ? response.setComplete()
        : response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(bytes)));
  }

  /**
   * {@code decisions} merged into those recorded on the exchange, recorded there in turn. When the
   * merged ones may carry no limit header but earlier ones were written, the fields are removed:
   * they would describe only part of the policies.
   */
  static List<Decision> record(ServerWebExchange exchange, List<Decision> decisions) {
    Objects.requireNonNull(decisions, "decisions");
    List<Decision> earlier = recorded(exchange);
    List<Decision> all = LimitHeaders.merge(earlier, decisions);
    exchange.getAttributes().put(DECISIONS, all);
    if (!earlier.isEmpty() && !LimitHeaders.hasLimitHeaders(all) && !exchange.getResponse().isCommitted()) {
      LimitHeaders.LIMIT_FIELDS.forEach(exchange.getResponse().getHeaders()::remove);
    }
    return all;
  }

  @SuppressWarnings("unchecked")
  static List<Decision> recorded(ServerWebExchange exchange) {
    return exchange.getAttribute(DECISIONS) instanceof List<?> list ? (List<Decision>) list : List.of();
  }
}

package dev.ratelimit.bench.frontdoor;

import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.ConsumptionProbe;
import io.github.bucket4j.TokensInheritanceStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.expression.ExpressionParser;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.StandardEvaluationContext;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Bucket4j behind a servlet filter, step by step as bucket4j-spring-boot-starter's servlet filter
 * does it (its Spring Boot 4 line, 0.14+, is not on Maven Central as this is written; 0.12.10, the
 * newest there, is built for Spring Boot 3.4 and needs classes Boot 4 moved): the URL regex matched
 * per request, the cache key a SpEL expression parsed and evaluated per request against the request
 * in a new {@link StandardEvaluationContext} with a bean resolver, the bucket key {@code url + "-" +
 * value}, a proxy bucket built per request with implicit configuration replacement, {@code
 * tryConsumeAndReturnRemaining(1)}, and the starter's default headers and 429 body. Left out: the
 * starter's metrics listener (this application has no Micrometer) and its skip/execute conditions
 * (none configured).
 */
final class Bucket4jStarterFilter extends OncePerRequestFilter {
  /** The starter's filter {@code url}, a regex. */
  static final String URL = "/work";
  /** The starter's {@code cache-key}: per user. */
  static final String CACHE_KEY = "getParameter('user')";
  /** The starter's default {@code http-response-body} and content type. */
  static final String BODY = "{ \"message\": \"Too many requests!\" }";
  private static final String CONTENT_TYPE = "application/json";
  /** The starter's configuration version, with which it builds every bucket. */
  private static final long CONFIG_VERSION = 1;

  private final ProxyManager<String> buckets;
  private final BucketConfiguration configuration;
  private final String keyPrefix;
  private final BeanFactory beans;
  private final ExpressionParser parser = new SpelExpressionParser();

  Bucket4jStarterFilter(ProxyManager<String> buckets, BucketConfiguration configuration, String keyPrefix,
      BeanFactory beans) {
    this.buckets = buckets;
    this.configuration = configuration;
    this.keyPrefix = keyPrefix;
    this.beans = beans;
  }

  @Override
  protected boolean shouldNotFilter(HttpServletRequest request) {
    return !request.getRequestURI().matches(URL);
  }

  @Override
  protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws ServletException, IOException {
    StandardEvaluationContext context = new StandardEvaluationContext();
    context.setBeanResolver(new BeanFactoryResolver(beans));
    String value = parser.parseExpression(CACHE_KEY).getValue(context, request, String.class);
    // the prefix keeps rows and rounds apart in one Redis; the starter's key is url + "-" + value
    String key = keyPrefix + ":" + URL + "-" + value;
    ConsumptionProbe probe = buckets.builder()
        .withImplicitConfigurationReplacement(CONFIG_VERSION, TokensInheritanceStrategy.RESET)
        .build(key, () -> configuration)
        .tryConsumeAndReturnRemaining(1);
    if (probe.isConsumed()) {
      response.setHeader("X-Rate-Limit-Remaining", Long.toString(probe.getRemainingTokens()));
      chain.doFilter(request, response);
      return;
    }
    response.setStatus(429);
    response.setHeader("X-Rate-Limit-Retry-After-Seconds",
        Long.toString(TimeUnit.NANOSECONDS.toSeconds(probe.getNanosToWaitForRefill())));
    response.setContentType(CONTENT_TYPE);
    response.getWriter().append(BODY);
  }
}

package dev.ratelimit.spring;

import dev.ratelimit.MultiDecision;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.internal.expression.Pipeline;
import dev.ratelimit.internal.expression.Sandbox;
import dev.ratelimit.servlet.ClientIp;
import dev.ratelimit.servlet.DeniedHandler;
import dev.ratelimit.http.DeniedResponse;
import dev.ratelimit.http.HeaderOptions;
import dev.ratelimit.http.MissingKey;
import dev.ratelimit.servlet.RateLimitFilter;
import dev.ratelimit.servlet.RateLimitResponses;
import dev.ratelimit.http.RateLimitRule;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.webflux.ExchangeResponses;
import dev.ratelimit.webflux.RateLimitWebFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.InstantSource;
import org.springframework.aop.Advisor;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.ClassUtils;
import org.springframework.core.env.Environment;
import org.springframework.context.annotation.EnableAspectJAutoProxy;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Role;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.type.AnnotatedTypeMetadata;
import java.util.List;
import java.util.Map;

/**
 * Auto-configuration of the rate limiter: the backend (Redis when configured, else memory), the
 * {@link RateLimiter}, named policies, the {@code @RateLimited} aspect, the servlet filter when
 * rules are configured, and 429 handling for Spring MVC. Every bean backs off when the application
 * defines its own.
 */
// after Redisson's own auto-configuration (redisson-spring-boot-starter), whose RedissonClient
// ratelimit.backend=auto then sees and uses
// after Boot's availability bean too: BackendReadiness answers Boot's readiness event after it has
// after Boot's Redis auto-configuration: its connection details are what our own Redisson client
// is built from
@AutoConfiguration(afterName = {"org.redisson.spring.starter.RedissonAutoConfigurationV2",
    "org.redisson.spring.starter.RedissonAutoConfigurationV4",
    "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
    "org.springframework.boot.autoconfigure.availability.ApplicationAvailabilityAutoConfiguration"})
@ConditionalOnProperty(prefix = "ratelimit", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(RateLimitProperties.class)
// Redis first: the in-memory backend backs off when Redis made one. (Not nested classes: Spring
// processes nested configuration classes before imports, which would reverse the order.)
@Import({RedisBackendConfiguration.class, MemoryBackendConfiguration.class, ServerForwardingConfiguration.class})
public class RateLimitAutoConfiguration {

  /** The named policies, validated at start-up. */
  @Bean
  @ConditionalOnMissingBean
  public PolicyRegistry rateLimitPolicies(RateLimitProperties properties) {
    return PolicyRegistry.from(properties);
  }

  /**
   * The limiter, on the application's {@link InstantSource} bean if it has one, else the system
   * clock, reporting to every {@link RateLimitListener} bean (metrics among them), in order, and
   * observed when the application has an ObservationRegistry.
   */
  @Bean
  @ConditionalOnMissingBean
  public RateLimiter rateLimiter(Backend backend, RateLimitProperties properties,
      ObjectProvider<InstantSource> clock, ObjectProvider<RateLimitListener> listeners,
      ObjectProvider<LimiterDecorator> decorators) {
    RateLimiter.Builder builder;
    try {
      builder = RateLimiter.builder()
          .backend(backend)
          .clock(clock.getIfAvailable(InstantSource::system))
          .failureMode(properties.getFailureMode())
          .timeout(properties.getTimeout())
          .failClosedRetryAfter(properties.getFailClosedRetryAfter())
          .localFallbackShare(properties.getLocalFallbackShare())
          .nearCacheMaximumEntries(properties.getNearCacheMaximumEntries())
          .circuitBreaker(properties.getCircuitBreaker().getFailureThreshold(),
              properties.getCircuitBreaker().getCoolDown())
          .shadow(properties.isShadow())
          .shadowPolicies(properties.getShadowPolicies());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("invalid ratelimit.* limiter setting: " + e.getMessage(), e);
    }
    if (properties.getNearCache() != null) {
      builder.nearCache(properties.getNearCache());
    }
    listeners.orderedStream().forEach(builder::listener);
    List<LimiterDecorator> decorations = decorators.orderedStream().toList();
    decorations.forEach(decorator -> decorator.configure(builder));
    RateLimiter limiter = builder.build();
    for (LimiterDecorator decorator : decorations) {
      limiter = decorator.decorate(limiter);
    }
    return limiter;
  }

  /** One log line per denied call, rate-limited, when {@code ratelimit.log-denials=true}. */
  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnProperty(prefix = "ratelimit", name = "log-denials", havingValue = "true")
  DenialLog rateLimitDenialLog(RateLimitProperties properties) {
    return new DenialLog(properties.isLogDenialsIncludeKey(), properties.getLogDenialsMaxPerSecond(), System::nanoTime);
  }

  /** Which limit headers responses carry. */
  @Bean
  @ConditionalOnMissingBean
  public HeaderOptions rateLimitHeaderOptions(RateLimitProperties properties) {
    return new HeaderOptions(properties.getHeaders().isDraft(), properties.getHeaders().isLegacy());
  }

  /**
   * What needs the servlet API (and spring-web): the client IP, and the request a {@code
   * @RateLimited} call serves. Without them (a batch job, a message listener) the aspect still
   * applies, with no request variables.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = {"jakarta.servlet.http.HttpServletRequest",
      "org.springframework.web.context.request.RequestContextHolder"})
  static class ServletConfiguration {
    /** The client IP of a request, trusting forwarding headers only from the configured proxies. */
    @Bean
    @ConditionalOnMissingBean
    public ClientIp rateLimitClientIp(RateLimitProperties properties) {
      try {
        return new ClientIp(properties.getTrustedProxies());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("invalid ratelimit.trusted-proxies: " + e.getMessage(), e);
      }
    }

    @Bean
    @ConditionalOnMissingBean
    CallRequest rateLimitCallRequest(ClientIp clientIp, HeaderOptions headers) {
      return new ServletCallRequest(clientIp, headers);
    }

    /**
     * What a denied request is answered with ({@code ratelimit.denied-response}), by the filter
     * (unless a rule says otherwise) and by the 429 of a {@code @RateLimited} controller call.
     */
    @Bean
    @ConditionalOnMissingBean
    public DeniedResponse rateLimitDeniedResponse(RateLimitProperties properties) {
      return ConfiguredDeniedResponse.build(properties.getDeniedResponse(), DeniedResponse.PROBLEM_JSON,
          "ratelimit.denied-response");
    }

  }

  /** {@code @RateLimited}: parsed at start-up, applied by an aspect. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.aspectj.lang.annotation.Aspect")
  @EnableAspectJAutoProxy(proxyTargetClass = true)
  static class AspectConfiguration {
    @Bean
    @ConditionalOnMissingBean
    RateLimitedMethods rateLimitedMethods(PolicyRegistry policies, BeanFactory beans, RateLimitProperties properties,
        ObjectProvider<RateLimiter> limiter) {
      // the annotation's sandbox: data objects' getters and methods, and the application's beans
      Sandbox sandbox = Sandbox.builder().dataObjects().beans(new BeanFactoryResolver(beans), beans::containsBean)
          .build();
      // a method may throw: a failing expression or a bad cost fails the call, naming the method
      return new RateLimitedMethods(policies, Pipeline.builder(sandbox, System.getLogger(RateLimitAspect.class.getName()))
          .onError(Pipeline.OnError.THROW)
          .missingKey(properties.getMissingKey() == RateLimitProperties.MissingKeyAction.REJECT
              ? Pipeline.MissingKey.REJECT : Pipeline.MissingKey.SHARED_BUCKET)
          .subject("call")
          .rejection("refused with MissingRateLimitKeyException")
          .build(), () -> limiter.getObject().takesReservations());
    }

    @Bean
    static RateLimitedMethodsValidator rateLimitedMethodsValidator(ObjectProvider<RateLimitedMethods> methods) {
      return new RateLimitedMethodsValidator(methods);
    }

    @Bean
    @ConditionalOnMissingBean
    RateLimitAspect rateLimitAspect(RateLimiter limiter, RateLimitedMethods methods, ObjectProvider<CallRequest> web,
        ObjectProvider<DenialLog> denials, RateLimitProperties properties) {
      dev.ratelimit.internal.http.ForwardedClient clientIp;
      try {
        clientIp = new dev.ratelimit.internal.http.ForwardedClient(properties.getTrustedProxies());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("invalid ratelimit.trusted-proxies: " + e.getMessage(), e);
      }
      return new RateLimitAspect(limiter, methods, web.getIfAvailable(() -> CallRequest.NONE), denials.getIfAvailable(),
          clientIp);
    }

    /**
     * Applies the aspect where {@link RateLimitedMethods} finds limits, in the aspect's order.
     * Infrastructure, as Spring's own advisors are: the proxy creator makes it while bean post
     * processors are still being made (the validator above among them), so no post processor could
     * apply to it, and Spring would warn of that on every start-up were it an application bean.
     */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    @ConditionalOnMissingBean(name = "rateLimitAdvisor")
    static Advisor rateLimitAdvisor(ObjectProvider<RateLimitAspect> aspect, Environment environment) {
      // the order is read from the environment: a static bean method runs before properties are bound
      return new RateLimitAdvisor(aspect, Binder.get(environment).bind("ratelimit.aspect.order", Integer.class).orElse(0));
    }
  }

  /** Spring MVC: a rate-limited controller method answers 429 as the filter does. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
  @ConditionalOnClass(name = "org.springframework.web.servlet.DispatcherServlet")
  static class MvcConfiguration {
    @Bean
    @ConditionalOnMissingBean
    RateLimitExceptionHandler rateLimitExceptionHandler(HeaderOptions headers, DeniedResponse deniedResponse) {
      return new RateLimitExceptionHandler(headers, deniedResponse);
    }
  }

  /** Matches when {@code ratelimit.filter.rules} has at least one rule. */
  static final class FilterRulesConfigured extends SpringBootCondition {
    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
      boolean any = Binder.get(context.getEnvironment())
          .bind("ratelimit.filter.rules", Bindable.listOf(Map.class))
          .map(rules -> !rules.isEmpty()).orElse(false);
      return any ? ConditionOutcome.match("ratelimit.filter.rules configured")
          : ConditionOutcome.noMatch("no ratelimit.filter.rules");
    }
  }

  /** The servlet filter, when {@code ratelimit.filter.rules} are configured. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
  @ConditionalOnProperty(prefix = "ratelimit.filter", name = "enabled", havingValue = "true", matchIfMissing = true)
  @Conditional(FilterRulesConfigured.class)
  static class FilterConfiguration {
    /**
     * The filter, its rules built from {@code ratelimit.filter.rules} and the named policies; when
     * a policy is {@link PolicyRegistry#update updated}, the rules are built again and swapped in.
     */
    @Bean
    @ConditionalOnMissingBean(name = "rateLimitFilter")
    FilterRegistrationBean<RateLimitFilter> rateLimitFilter(RateLimiter limiter, PolicyRegistry policies,
        RateLimitProperties properties, HeaderOptions headers, DeniedResponse deniedResponse,
        ObjectProvider<DenialLog> denials, Environment environment, BeanFactory beans) {
      RateLimitFilter.Builder builder = RateLimitFilter.builder(limiter)
          .matchAll(properties.getFilter().isMatchAll())
          .trustedProxies(properties.getTrustedProxies())
          .headers(headers)
          .deniedResponse(deniedResponse)
          .missingKey(properties.getMissingKey() == RateLimitProperties.MissingKeyAction.REJECT
              ? MissingKey.REJECT : MissingKey.SHARED_BUCKET);
      DenialLog denialLog = denials.getIfAvailable();
      CorsOnDenial cors = properties.getFilter().isCors()
          && ClassUtils.isPresent(CORS_SOURCE, RateLimitAutoConfiguration.class.getClassLoader())
          ? new CorsOnDenial(beans) : null;
      if (denialLog != null || cors != null) {
        builder.deniedHandler(new LoggingDeniedHandler(denialLog, cors, headers, deniedResponse));
      }
      FilterRules.requirePrincipalKnown(properties, environment, SECURITY_FILTER_CHAIN);
      FilterRules.rules(properties, policies, deniedResponse).forEach(builder::rule);
      RateLimitFilter filter = builder.build();
      policies.onUpdate(updated -> filter.replaceRules(FilterRules.rules(properties, updated, deniedResponse)));
      FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(filter);
      registration.setOrder(properties.getFilter().getOrder());
      return registration;
    }

    /** Spring's CORS configuration type (spring-web), needed for {@link CorsOnDenial}. */
    private static final String CORS_SOURCE = "org.springframework.web.cors.CorsConfigurationSource";

    /** Spring Security's filter chain, whose order the filter's default runs before. */
    private static final String SECURITY_FILTER_CHAIN = "org.springframework.security.web.FilterChainProxy";

    /**
     * Before the response the rule or the filter is configured with, the denial log line and the
     * application's CORS headers.
     */
    private static final class LoggingDeniedHandler implements DeniedHandler {
      private final DenialLog denialLog; // null unless ratelimit.log-denials=true
      private final CorsOnDenial cors; // null unless ratelimit.filter.cors and spring-web's CORS support
      private final HeaderOptions headers;
      private final DeniedResponse filterResponse;

      LoggingDeniedHandler(DenialLog denialLog, CorsOnDenial cors, HeaderOptions headers,
          DeniedResponse filterResponse) {
        this.denialLog = denialLog;
        this.cors = cors;
        this.headers = headers;
        this.filterResponse = filterResponse;
      }

      @Override
      public void handle(HttpServletRequest request, HttpServletResponse response, MultiDecision decision,
          DeniedResponse configured) throws IOException {
        if (denialLog != null) {
          denialLog.denied("filter", decision.limiting(), null); // the filter does not expose the key
        }
        if (cors != null) {
          cors.apply(request, response);
        }
        RateLimitResponses.writeDenied(request, response, decision.decisions(), headers, configured);
      }

      @Override
      public void handle(HttpServletRequest request, HttpServletResponse response, MultiDecision decision)
          throws IOException {
        handle(request, response, decision, filterResponse);
      }
    }

  }

  /**
   * Spring WebFlux: the reactive filter when {@code ratelimit.filter.rules} are configured (the
   * same properties as the servlet filter's), and the 429 of a {@code @RateLimited} handler whose
   * {@code Mono} or {@code Flux} signals {@link dev.ratelimit.annotation.RateLimitExceededException}.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
  @ConditionalOnClass(name = {"org.springframework.web.server.WebFilter", "dev.ratelimit.webflux.RateLimitWebFilter"})
  static class ReactiveConfiguration {
    /**
     * {@code ratelimit.denied-response}, built where it is used: a reactive application may lack
     * the servlet API, which a {@link DeniedResponse} bean's introspection would need.
     */
    static DeniedResponse deniedResponse(RateLimitProperties properties) {
      return ConfiguredDeniedResponse.build(properties.getDeniedResponse(), DeniedResponse.PROBLEM_JSON,
          "ratelimit.denied-response");
    }

    /**
     * Puts each exchange in the Reactor context of its handling, where a reactive {@code
     * @RateLimited} call reads its request variables ({@code #request}, {@code #clientIp} ...).
     */
    @Bean
    @ConditionalOnMissingBean
    org.springframework.web.filter.reactive.ServerWebExchangeContextFilter rateLimitExchangeContextFilter() {
      return new org.springframework.web.filter.reactive.ServerWebExchangeContextFilter();
    }

    @Bean
    @ConditionalOnMissingBean
    RateLimitWebExceptionHandler rateLimitWebExceptionHandler(HeaderOptions headers, RateLimitProperties properties) {
      return new RateLimitWebExceptionHandler(headers, deniedResponse(properties));
    }

    /** Spring Security's reactive filter chain, whose order (-100) the filter's default runs before. */
    private static final String SECURITY_WEB_FILTER_CHAIN = "org.springframework.security.web.server.WebFilterChainProxy";

    /** The reactive filter, when {@code ratelimit.filter.rules} are configured. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "ratelimit.filter", name = "enabled", havingValue = "true", matchIfMissing = true)
    @Conditional(FilterRulesConfigured.class)
    static class WebFilterConfiguration {
      /**
       * The filter, its rules built from {@code ratelimit.filter.rules} and the named policies, and
       * built again when a policy is {@link PolicyRegistry#update updated}.
       */
      @Bean
      @ConditionalOnMissingBean(name = "rateLimitWebFilter")
      RateLimitWebFilter rateLimitWebFilter(RateLimiter limiter, PolicyRegistry policies,
          RateLimitProperties properties, HeaderOptions headers, ObjectProvider<DenialLog> denials,
          Environment environment, BeanFactory beans) {
        DeniedResponse deniedResponse = deniedResponse(properties);
        RateLimitWebFilter.Builder builder;
        try {
          builder = RateLimitWebFilter.builder(limiter)
              .matchAll(properties.getFilter().isMatchAll())
              .trustedProxies(properties.getTrustedProxies())
              .headers(headers)
              .deniedResponse(deniedResponse)
              .order(properties.getFilter().getOrder())
              .missingKey(properties.getMissingKey() == RateLimitProperties.MissingKeyAction.REJECT
                  ? MissingKey.REJECT : MissingKey.SHARED_BUCKET);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException("invalid ratelimit.trusted-proxies: " + e.getMessage(), e);
        }
        DenialLog denialLog = denials.getIfAvailable();
        ReactiveCorsOnDenial cors = properties.getFilter().isCors() ? new ReactiveCorsOnDenial(beans) : null;
        if (denialLog != null || cors != null) {
          builder.deniedHandler((exchange, decision, configured) -> {
            if (denialLog != null) {
              denialLog.denied("filter", decision.limiting(), null);
            }
            if (cors != null) {
              cors.apply(exchange);
            }
            return ExchangeResponses.writeDenied(exchange, decision.decisions(), headers, configured);
          });
        }
        FilterRules.requirePrincipalKnown(properties, environment, SECURITY_WEB_FILTER_CHAIN);
        List<RateLimitRule> rules = FilterRules.rules(properties, policies, deniedResponse);
        for (int i = 0; i < rules.size(); i++) {
          try { // each alone first: a rule that reads what a reactive request lacks is named by its property
            RateLimitWebFilter.builder(limiter).rule(rules.get(i)).build();
          } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid ratelimit.filter.rules[" + i + "] in a reactive application: "
                + e.getMessage(), e);
          }
          builder.rule(rules.get(i));
        }
        RateLimitWebFilter filter = builder.build();
        policies.onUpdate(updated -> filter.replaceRules(FilterRules.rules(properties, updated, deniedResponse)));
        return filter;
      }
    }
  }
}

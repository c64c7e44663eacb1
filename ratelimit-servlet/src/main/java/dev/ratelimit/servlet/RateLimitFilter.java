package dev.ratelimit.servlet;

import dev.ratelimit.RateLimiter;
import dev.ratelimit.http.DeniedResponse;
import dev.ratelimit.http.HeaderOptions;
import dev.ratelimit.http.MissingKey;
import dev.ratelimit.http.RateLimitRule;
import dev.ratelimit.http.RuleSetBuilder;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.List;
import java.util.Objects;

/**
 * A servlet filter that rate-limits requests by rules: path patterns, methods, a key and a cost in
 * SpEL, and policies. No Spring container is needed.
 *
 * <p>In code:
 * <pre>{@code
 * RateLimiter limiter = RateLimiter.inMemory();
 * RateLimitFilter filter = RateLimitFilter.builder(limiter)
 *     .rule(RateLimitRule.builder("api")
 *         .path("/api/**")
 *         .policy(Policy.parse("100/1m").withName("per-ip"))
 *         .build())
 *     .trustedProxies(List.of("10.0.0.0/8"))
 *     .build();
 * servletContext.addFilter("rateLimit", filter).addMappingForUrlPatterns(null, false, "/*");
 * }</pre>
 *
 * <p>Without code ({@code web.xml}, or {@code ServletContext.addFilter(name, RateLimitFilter.class)}):
 * the init-param {@value #CONFIG_PARAM} names a {@link RateLimitConfig} file ({@code .properties},
 * {@code .yml} or {@code .yaml}; a path or {@code classpath:...}); {@link #init} reads it and
 * builds the limiter it describes, which {@link #destroy} closes.
 *
 * <p>Per request:
 * <ol>
 *   <li>Rules are tried in order; the first that matches applies, or with
 *       {@link Builder#matchAll(boolean) matchAll} every one that matches. A rule whose
 *       {@link RateLimitRule#when() when} or {@link RateLimitRule#skipWhen() skipWhen} leaves the
 *       request out does not match.</li>
 *   <li>Each matched rule's key and cost are evaluated; a missing key is handled per
 *       {@link MissingKey}, before anything is counted.</li>
 *   <li>Each matched rule's policies are checked together with one
 *       {@link RateLimiter#checkAll checkAll} under the key {@code <rule>:<key>}. With matchAll,
 *       rules are checked in order, one {@code checkAll} per rule (each rule's key is its own),
 *       and the first denial stops: later rules are not charged, earlier ones have been (there is
 *       no atomicity across rules).</li>
 *   <li>The limit headers of every policy checked are set ({@link HeaderOptions}; none when the
 *       limiter failed and its failure mode decided). Allowed: the chain proceeds. Denied: the
 *       {@link DeniedHandler} answers (by default with the denying rule's or the filter's {@link
 *       DeniedResponse}: 429 with a problem body unless configured otherwise), the chain does not.</li>
 * </ol>
 * A request is counted once, also when forwarded, included or dispatched again to the filter.
 * A failing backend never fails a request: the limiter's {@link dev.ratelimit.FailureMode} decides.
 */
public final class RateLimitFilter implements Filter {
  /** The init-param naming the configuration file of a filter built with {@link #RateLimitFilter()}. */
  public static final String CONFIG_PARAM = "config";

  private volatile FilterEngine engine;
  private RateLimiter ownedLimiter; // built from the config file; closed by destroy()

  /**
   * A filter configured by its init-param {@value #CONFIG_PARAM} when the container calls
   * {@link #init}: for {@code web.xml} and {@code ServletContext.addFilter(name, RateLimitFilter.class)}.
   */
  public RateLimitFilter() {}

  private RateLimitFilter(FilterEngine engine) {
    this.engine = engine;
  }

  /** A builder of a filter that checks with {@code limiter} (which the filter never closes). */
  public static Builder builder(RateLimiter limiter) {
    return new Builder(limiter);
  }

  /**
   * For a filter from {@link #RateLimitFilter()}: loads the file named by the init-param
   * {@value #CONFIG_PARAM} and builds its limiter. A filter from {@link #builder} has nothing to do
   * and refuses the init-param.
   *
   * @throws ServletException when the init-param is missing or the file is invalid, or when a Redis
   *     that answers refuses the URL's user, password or database, with the message naming the
   *     property at fault
   */
  @Override
  public void init(FilterConfig filterConfig) throws ServletException {
    String location = filterConfig.getInitParameter(CONFIG_PARAM);
    boolean fromFile;
    synchronized (this) {
      fromFile = ownedLimiter != null;
    }
    if (engine != null) {
      if (fromFile) {
        throw new ServletException("filter '" + filterConfig.getFilterName() + "' is already initialised; "
            + "destroy() it before init() again");
      }
      if (location != null) {
        throw new ServletException("filter '" + filterConfig.getFilterName() + "' was built in code; "
            + "it does not read the init-param '" + CONFIG_PARAM + "' (" + location + ")");
      }
      return;
    }
    if (location == null || location.isBlank()) {
      throw new ServletException("filter '" + filterConfig.getFilterName() + "' (" + getClass().getName()
          + ") needs the init-param '" + CONFIG_PARAM + "': a .properties, .yml or .yaml file path or "
          + "classpath:... resource");
    }
    RateLimiter limiter = null;
    try {
      RateLimitConfig config = RateLimitConfig.load(location.trim());
      limiter = config.newLimiter();
      FilterEngine built = config.filterBuilder(limiter).engine();
      synchronized (this) {
        ownedLimiter = limiter;
        engine = built;
      }
    } catch (RuntimeException | Error e) { // an Error too: a mismatched Redisson version fails here
      if (limiter != null) {
        limiter.close();
      }
      throw new ServletException("filter '" + filterConfig.getFilterName() + "': " + e.getMessage(), e);
    }
  }

  /** Limits HTTP requests as configured; passes anything else on. */
  @Override
  public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    FilterEngine e = engine;
    if (e == null) {
      throw new ServletException("RateLimitFilter was not initialised: the container calls init() "
          + "with the init-param '" + CONFIG_PARAM + "', or build it with RateLimitFilter.builder(...)");
    }
    if (request instanceof HttpServletRequest http && response instanceof HttpServletResponse httpResponse) {
      e.handle(http, httpResponse, chain);
    } else {
      chain.doFilter(request, response);
    }
  }

  /**
   * Replaces the rules, everything else kept: requests that start after this call see the new
   * rules, requests in flight finish under the old ones. The rules are validated as
   * {@link Builder#build()} validates them and swapped in as one immutable set; a bad set changes
   * nothing. Limiter state is untouched: a rule keeps its keys ({@code <rule>:<key>}) and a policy
   * its state under its name, so changing a policy's numbers does not reset anyone's count.
   *
   * @throws IllegalArgumentException when there is no rule, two rules share a name, or with
   *     {@code matchAll} two rules share a policy name
   * @throws IllegalStateException when the filter was not initialised yet
   */
  public synchronized void replaceRules(List<RateLimitRule> rules) {
    FilterEngine e = engine;
    if (e == null) {
      throw new IllegalStateException("RateLimitFilter was not initialised; nothing to replace");
    }
    engine = e.withRules(List.copyOf(rules));
  }

  /** The names of the rules in force, in order (for diagnostics). */
  public List<String> ruleNames() {
    FilterEngine e = engine;
    return e == null ? List.of() : e.ruleNames();
  }

  /**
   * Closes the limiter that {@link #init} built from a file, and forgets the rules read with it (and
   * any set since with {@link #replaceRules}, which then throws until the next {@code init}), so
   * that the container may {@link #init} this filter again (a context restarted with the same
   * instance); a limiter given to the builder is the caller's, and such a filter keeps its rules.
   */
  @Override
  public void destroy() {
    RateLimiter limiter;
    synchronized (this) {
      limiter = ownedLimiter;
      ownedLimiter = null;
      if (limiter != null) {
        engine = null; // a request arriving now is refused as before init, not checked on a closed limiter
      }
    }
    if (limiter != null) {
      limiter.close();
    }
  }

  /**
   * Configures a {@link RateLimitFilter}: the rules and what both filters share ({@link
   * RuleSetBuilder}), and who answers a denial. Not thread-safe; {@link #build()} copies what it
   * holds.
   */
  public static final class Builder extends RuleSetBuilder<Builder> {
    private DeniedHandler deniedHandler;

    private Builder(RateLimiter limiter) {
      super(limiter);
    }

    /**
     * Who answers a denied request; default one that writes the rule's or the filter's {@link
     * #deniedResponse}, which a handler is given too ({@link DeniedHandler#handle(HttpServletRequest,
     * HttpServletResponse, dev.ratelimit.MultiDecision, DeniedResponse)}).
     */
    public Builder deniedHandler(DeniedHandler deniedHandler) {
      this.deniedHandler = Objects.requireNonNull(deniedHandler, "deniedHandler");
      return this;
    }

    /**
     * The filter, its expressions and patterns parsed once.
     *
     * @throws IllegalArgumentException when there is no rule, two rules share a name, or with
     *     {@code matchAll} two rules share a policy name
     */
    public RateLimitFilter build() {
      return new RateLimitFilter(engine());
    }

    FilterEngine engine() {
      return new FilterEngine(engine(Expressions.DOOR, Expressions.LOG, "RateLimitFilter.Builder"), deniedHandler);
    }
  }
}

package dev.ratelimit.spring;

import dev.ratelimit.Algorithm;
import dev.ratelimit.FailureMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;

/** Configuration of the rate limiter under {@code ratelimit.*}. */
@ConfigurationProperties(prefix = "ratelimit")
public class RateLimitProperties {

  /** Whether rate limiting is enabled at all. */
  private boolean enabled = true;

  /** Where state lives: auto (Redis when configured or a RedissonClient bean exists, else memory), memory or redis. */
  private BackendType backend = BackendType.AUTO;

  /** What a backend failure decides. */
  private FailureMode failureMode = FailureMode.FAIL_OPEN;

  /** How long one check may take before the failure mode decides (the whole call, backend included). */
  private Duration timeout = Duration.ofMillis(250);

  /** The retryAfter of a FAIL_CLOSED decision. */
  private Duration failClosedRetryAfter = Duration.ofSeconds(1);

  /** With LOCAL_FALLBACK, the share of each limit this instance may admit alone during an outage, in (0, 1]. */
  private double localFallbackShare = 1.0;

  /** Whether hot denied keys are answered from a local near-cache; unset: on for Redis, off for memory. */
  private Boolean nearCache;

  /** The most hot denied (key, policy) pairs the near-cache holds; beyond it checks go to the backend again. */
  private long nearCacheMaximumEntries = 10_000;

  /** Whether every policy runs in shadow mode: checked and counted, never blocking. */
  private boolean shadow = false;

  /** Names of policies that run in shadow mode. */
  private java.util.Set<String> shadowPolicies = new java.util.LinkedHashSet<>();

  private final CircuitBreaker circuitBreaker = new CircuitBreaker();

  /**
   * What happens to a request or call whose key is missing: its key expression gives null, a blank
   * text or a value that is not a key (or, in a filter rule, fails).
   */
  private MissingKeyAction missingKey = MissingKeyAction.SHARED_BUCKET;

  /** CIDRs of proxies whose X-Forwarded-For and Forwarded headers are trusted, e.g. 10.0.0.0/8. */
  private List<String> trustedProxies = new ArrayList<>();

  /** Named policies, referenced by {@code @RateLimited(policy = ...)} and filter rules. */
  private Map<String, PolicyProperties> policies = new LinkedHashMap<>();

  /**
   * Whether to log each denied call (a @RateLimited method or a filter rule) at INFO on the logger
   * dev.ratelimit.denials: policy, outcome and retryAfter, without the key.
   */
  private boolean logDenials = false;

  /**
   * Whether denial log lines carry the rate-limit key too (@RateLimited only; the filter's lines
   * never do). Keys may be personal data such as user ids or IP addresses.
   */
  private boolean logDenialsIncludeKey = false;

  /** The most denial log lines per second; denials beyond it are counted in the next line. */
  private int logDenialsMaxPerSecond = 10;

  private final Health health = new Health();
  private final Readiness readiness = new Readiness();
  private final Memory memory = new Memory();
  private final Redis redis = new Redis();
  private final Headers headers = new Headers();
  private final Denied deniedResponse = new Denied();
  private final Aspect aspect = new Aspect();
  @NestedConfigurationProperty
  private final FilterProperties filter = new FilterProperties();

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public BackendType getBackend() {
    return backend;
  }

  public void setBackend(BackendType backend) {
    this.backend = backend;
  }

  public FailureMode getFailureMode() {
    return failureMode;
  }

  public void setFailureMode(FailureMode failureMode) {
    this.failureMode = failureMode;
  }

  public Duration getTimeout() {
    return timeout;
  }

  public void setTimeout(Duration timeout) {
    this.timeout = timeout;
  }

  public Duration getFailClosedRetryAfter() {
    return failClosedRetryAfter;
  }

  public void setFailClosedRetryAfter(Duration failClosedRetryAfter) {
    this.failClosedRetryAfter = failClosedRetryAfter;
  }

  public double getLocalFallbackShare() {
    return localFallbackShare;
  }

  public void setLocalFallbackShare(double localFallbackShare) {
    this.localFallbackShare = localFallbackShare;
  }

  public Boolean getNearCache() {
    return nearCache;
  }

  public void setNearCache(Boolean nearCache) {
    this.nearCache = nearCache;
  }

  public long getNearCacheMaximumEntries() {
    return nearCacheMaximumEntries;
  }

  public void setNearCacheMaximumEntries(long nearCacheMaximumEntries) {
    this.nearCacheMaximumEntries = nearCacheMaximumEntries;
  }

  public boolean isShadow() {
    return shadow;
  }

  public void setShadow(boolean shadow) {
    this.shadow = shadow;
  }

  public java.util.Set<String> getShadowPolicies() {
    return shadowPolicies;
  }

  public void setShadowPolicies(java.util.Set<String> shadowPolicies) {
    this.shadowPolicies = shadowPolicies;
  }

  public CircuitBreaker getCircuitBreaker() {
    return circuitBreaker;
  }

  /** The circuit breaker around the backend. */
  public static class CircuitBreaker {
    /** Consecutive failures that open the circuit; 0 disables the breaker. */
    private int failureThreshold = 5;

    /**
     * The longest wait of an open circuit between probe calls: the first probe of an outage goes after
     * 100 ms, each failed probe doubles the wait up to this.
     */
    private Duration coolDown = Duration.ofSeconds(5);

    public int getFailureThreshold() {
      return failureThreshold;
    }

    public void setFailureThreshold(int failureThreshold) {
      this.failureThreshold = failureThreshold;
    }

    public Duration getCoolDown() {
      return coolDown;
    }

    public void setCoolDown(Duration coolDown) {
      this.coolDown = coolDown;
    }
  }

  public MissingKeyAction getMissingKey() {
    return missingKey;
  }

  public void setMissingKey(MissingKeyAction missingKey) {
    this.missingKey = missingKey;
  }

  public List<String> getTrustedProxies() {
    return trustedProxies;
  }

  public void setTrustedProxies(List<String> trustedProxies) {
    this.trustedProxies = trustedProxies;
  }

  public Map<String, PolicyProperties> getPolicies() {
    return policies;
  }

  public void setPolicies(Map<String, PolicyProperties> policies) {
    this.policies = policies;
  }

  public boolean isLogDenials() {
    return logDenials;
  }

  public void setLogDenials(boolean logDenials) {
    this.logDenials = logDenials;
  }

  public boolean isLogDenialsIncludeKey() {
    return logDenialsIncludeKey;
  }

  public void setLogDenialsIncludeKey(boolean logDenialsIncludeKey) {
    this.logDenialsIncludeKey = logDenialsIncludeKey;
  }

  public int getLogDenialsMaxPerSecond() {
    return logDenialsMaxPerSecond;
  }

  public void setLogDenialsMaxPerSecond(int logDenialsMaxPerSecond) {
    if (logDenialsMaxPerSecond < 1 || logDenialsMaxPerSecond > DenialLog.MAX_PER_SECOND) {
      throw new IllegalArgumentException("ratelimit.log-denials-max-per-second must be from 1 to "
          + DenialLog.MAX_PER_SECOND + ", was " + logDenialsMaxPerSecond);
    }
    this.logDenialsMaxPerSecond = logDenialsMaxPerSecond;
  }

  public Health getHealth() {
    return health;
  }

  /** The {@code ratelimit} health component. */
  public static class Health {
    /**
     * Whether the health component's details include the backend probe's error: its exception
     * class and message, which for Redis name the server's host and port. Off by default, since
     * Boot shows a component's details to every caller it shows any to; turn it on only when
     * show-details is when-authorized, or the health endpoint is not public.
     */
    private boolean showSensitiveDetails = false;

    public boolean isShowSensitiveDetails() {
      return showSensitiveDetails;
    }

    public void setShowSensitiveDetails(boolean showSensitiveDetails) {
      this.showSensitiveDetails = showSensitiveDetails;
    }
  }

  public Readiness getReadiness() {
    return readiness;
  }

  /** The application's readiness (Spring Boot's ReadinessState) at start-up. */
  public static class Readiness {
    /**
     * Whether, with the Redis backend, the application stays not ready (REFUSING_TRAFFIC) until
     * Redis has answered once and the scripts are loaded; until then the failure mode would decide
     * every check. Later outages do not change readiness. Off by default: Redis is an external
     * system, which by Spring Boot's rule is not part of readiness, and under FAIL_OPEN an
     * application whose Redis is down is open, so ready.
     */
    private boolean enabled = false;

    /**
     * The longest time the application stays not ready waiting for Redis's first answer; then it
     * becomes ready and the failure mode decides until Redis answers, as in any later outage. A fleet
     * restarted during a Redis outage serves again instead of staying out of service. Set a long
     * duration to wait as long as Redis takes.
     */
    private Duration maxWait = Duration.ofSeconds(30);

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public Duration getMaxWait() {
      return maxWait;
    }

    public void setMaxWait(Duration maxWait) {
      this.maxWait = maxWait;
    }
  }

  public Memory getMemory() {
    return memory;
  }

  public Redis getRedis() {
    return redis;
  }

  public Headers getHeaders() {
    return headers;
  }

  public Denied getDeniedResponse() {
    return deniedResponse;
  }

  public Aspect getAspect() {
    return aspect;
  }

  public FilterProperties getFilter() {
    return filter;
  }

  /** Where state lives. */
  public enum BackendType {
    /**
     * Redis when {@code ratelimit.redis.url}, {@code spring.data.redis.url}, {@code host}, {@code
     * sentinel.nodes} or {@code cluster.nodes} is set, a Redis service connection or a
     * RedissonClient bean is there, else memory.
     */
    AUTO,
    /** The in-memory backend: one limit per instance. */
    MEMORY,
    /** Redis: one limit shared by every instance. */
    REDIS
  }

  /** What happens to a request or call whose key is missing. */
  public enum MissingKeyAction {
    /** Limit it under one shared "missing key" bucket per policy or rule (and log it, rate-limited). */
    SHARED_BUCKET,
    /**
     * Reject it (and log it, rate-limited): the filter answers 400, a {@code @RateLimited} method
     * throws {@link MissingRateLimitKeyException}.
     */
    REJECT
  }

  /** One named policy. */
  public static class PolicyProperties {
    /** Units admitted per window. */
    private Long limit;

    /**
     * The window, e.g. 1m, 500ms or PT1M (ISO-8601); a bare number is milliseconds, as for every
     * duration Boot binds.
     */
    private Duration window;

    /** The algorithm. */
    private Algorithm algorithm = Algorithm.GCRA;

    /** The capacity of the bucket algorithms; default the limit. */
    private Long burst;

    public Long getLimit() {
      return limit;
    }

    public void setLimit(Long limit) {
      this.limit = limit;
    }

    public Duration getWindow() {
      return window;
    }

    public void setWindow(Duration window) {
      this.window = window;
    }

    public Algorithm getAlgorithm() {
      return algorithm;
    }

    public void setAlgorithm(Algorithm algorithm) {
      this.algorithm = algorithm;
    }

    public Long getBurst() {
      return burst;
    }

    public void setBurst(Long burst) {
      this.burst = burst;
    }
  }

  /** The in-memory backend. */
  public static class Memory {
    /** The most (key, policy) states held at once. */
    private long maximumKeys = 1_000_000;

    public long getMaximumKeys() {
      return maximumKeys;
    }

    public void setMaximumKeys(long maximumKeys) {
      this.maximumKeys = maximumKeys;
    }
  }

  /** The Redis backend. */
  public static class Redis {
    /**
     * Redis URL (redis://[user:password@]host[:port][/database], rediss:// for TLS) of one server,
     * for a client of our own when there is no RedissonClient bean; before Boot's spring.data.redis.
     */
    private String url;

    /** The first part of every key. */
    private String keyPrefix = "rl";

    /**
     * How long one Redis call may take (Redisson's timeout); when not set, never longer than
     * {@code ratelimit.timeout} nor, for Boot's Redis, spring.data.redis.timeout; set longer than
     * {@code ratelimit.timeout}, start-up fails.
     */
    private Duration timeout = Duration.ofMillis(200);

    /**
     * How many replicas must acknowledge each check's writes before the check is answered (Redis
     * WAIT after the script, on the same connection); 0: none. With 1, a failover to a replica
     * loses no admission; a check that fewer replicas acknowledged within
     * wait-for-replicas-timeout is decided by the failure mode. Run more replicas than this per
     * master, or a master left without one after a failover fails every check of its slots.
     */
    private int waitForReplicas = 0;

    /** How long a check waits for wait-for-replicas replicas; shorter than ratelimit.redis.timeout. */
    private Duration waitForReplicasTimeout = Duration.ofMillis(50);

    public int getWaitForReplicas() {
      return waitForReplicas;
    }

    public void setWaitForReplicas(int waitForReplicas) {
      this.waitForReplicas = waitForReplicas;
    }

    public Duration getWaitForReplicasTimeout() {
      return waitForReplicasTimeout;
    }

    public void setWaitForReplicasTimeout(Duration waitForReplicasTimeout) {
      this.waitForReplicasTimeout = waitForReplicasTimeout;
    }

    public String getUrl() {
      return url;
    }

    public void setUrl(String url) {
      this.url = url;
    }

    public String getKeyPrefix() {
      return keyPrefix;
    }

    public void setKeyPrefix(String keyPrefix) {
      this.keyPrefix = keyPrefix;
    }

    public Duration getTimeout() {
      return timeout;
    }

    public void setTimeout(Duration timeout) {
      this.timeout = timeout;
    }
  }

  /** Response headers. */
  public static class Headers {
    /** Whether to send the IETF draft RateLimit and RateLimit-Policy headers. */
    private boolean draft = true;

    /** Whether to send X-RateLimit-Limit, -Remaining and -Reset as well. */
    private boolean legacy = false;

    public boolean isDraft() {
      return draft;
    }

    public void setDraft(boolean draft) {
      this.draft = draft;
    }

    public boolean isLegacy() {
      return legacy;
    }

    public void setLegacy(boolean legacy) {
      this.legacy = legacy;
    }
  }

  /**
   * The answer to a denied request: the filter's, and that of a {@code @RateLimited} call Spring MVC
   * turns into an error response. Unset fields keep the default, 429 with an RFC 9457
   * application/problem+json body; a filter rule's fields are over these.
   */
  public static class Denied {
    /** The status of a denied request, 4xx or 5xx; unset: 429 (a filter rule: the global one). */
    private Integer status;

    /**
     * The body's content type, such as application/json, for which the body's placeholders are
     * escaped; required with a body. Without a body, the problem body is sent in this type.
     */
    private String contentType;

    /**
     * The body: a template with the placeholders {{status}}, {{policy}} (the limiting policy),
     * {{policies}} (the denying ones, comma-separated), {{retry-after}} (seconds) and {{limit}},
     * each escaped for the content type (JSON, HTML/XML, else as is). Unset: the problem body;
     * empty: no body.
     */
    private String body;

    /**
     * Extra headers of a denied response, as fixed text; not Retry-After, the limit headers,
     * Content-Type or Content-Length. A filter rule's are added to these. Names keep their case in
     * brackets, e.g. "[X-Error-Code]".
     */
    private Map<String, String> headers = new LinkedHashMap<>();

    public Integer getStatus() {
      return status;
    }

    public void setStatus(Integer status) {
      this.status = status;
    }

    public String getContentType() {
      return contentType;
    }

    public void setContentType(String contentType) {
      this.contentType = contentType;
    }

    public String getBody() {
      return body;
    }

    public void setBody(String body) {
      this.body = body;
    }

    public Map<String, String> getHeaders() {
      return headers;
    }

    public void setHeaders(Map<String, String> headers) {
      this.headers = headers;
    }

    /** Whether any field is set. */
    boolean anySet() {
      return status != null || contentType != null || body != null || !headers.isEmpty();
    }
  }

  /** The {@code @RateLimited} aspect. */
  public static class Aspect {
    /** The aspect's order; the default runs it before @Transactional and @Cacheable. */
    private int order = 0;

    public int getOrder() {
      return order;
    }

    public void setOrder(int order) {
      this.order = order;
    }
  }
}

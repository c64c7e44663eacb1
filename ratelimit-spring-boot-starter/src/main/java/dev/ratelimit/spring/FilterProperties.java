package dev.ratelimit.spring;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code ratelimit.filter.*}: the front door's filter, servlet or reactive, and its rules, bound
 * onto the one rule model both filters run ({@code dev.ratelimit.http.RateLimitRule}).
 */
public class FilterProperties {
  /** Whether to register the filter when rules are configured. */
  private boolean enabled = true;

  /** Whether every matching rule applies (true) or only the first (false). */
  private boolean matchAll = false;

  /**
   * The filter's order among servlet filters. The default, -101, runs it just before Spring
   * Security's filter chain (-100), so that requests Spring Security answers itself (its form
   * login, a failed basic login, an unauthenticated request) are limited too; {@code #principal}
   * is then not yet known. Above -100 the filter runs after Spring Security.
   */
  private int order = -101; // a literal: the configuration metadata shows it as the default

  /**
   * Whether a 429 the filter writes carries the application's CORS headers (from the
   * {@code corsConfigurationSource} bean, else Spring MVC's mappings), so that a browser lets the
   * page's script see it. The filter runs before Spring Security's and Spring MVC's CORS handling,
   * which would otherwise never add them.
   */
  private boolean cors = true;

  /** The rules, evaluated in order. */
  private List<Rule> rules = new ArrayList<>();

  public boolean isCors() {
    return cors;
  }

  public void setCors(boolean cors) {
    this.cors = cors;
  }

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public boolean isMatchAll() {
    return matchAll;
  }

  public void setMatchAll(boolean matchAll) {
    this.matchAll = matchAll;
  }

  public int getOrder() {
    return order;
  }

  public void setOrder(int order) {
    this.order = order;
  }

  public List<Rule> getRules() {
    return rules;
  }

  public void setRules(List<Rule> rules) {
    this.rules = rules;
  }

  /** One filter rule. */
  public static class Rule {
    /** The rule's name; it namespaces the rule's keys. */
    private String name;

    /** Path patterns (PathPattern syntax), e.g. /api/**. */
    private List<String> paths = new ArrayList<>();

    /** HTTP methods; empty means all. */
    private List<String> methods = new ArrayList<>();

    /** Names of policies from ratelimit.policies, checked together. */
    private List<String> policies = new ArrayList<>();

    /** The key, in SpEL. */
    private String key = "#clientIp";

    /** The cost, in SpEL. */
    private String cost = "1";

    /**
     * The condition under which the rule applies, in SpEL on the key's variables, e.g.
     * "#params['plan'] == 'free'"; unset: always. A rule a condition leaves out does not match.
     */
    private String when;

    /**
     * The condition under which the rule does not apply, in SpEL on the key's variables, e.g.
     * "#path == '/health'"; unset: never.
     */
    private String skipWhen;

    /**
     * The condition under which a request is charged, read after its response, in SpEL on the key's
     * variables and #response, e.g. "#response.status == 401": the cost is reserved before the
     * request (refused while the rule has no room for it) and given back after it when the
     * condition is false. Unset: every request is charged before it proceeds.
     */
    private String countWhen;

    /**
     * The actual cost of a request, read after its response, in SpEL on the key's variables and
     * #response, e.g. "#response.headers['X-Tokens-Used']": the rule's cost is then the estimate
     * reserved before the request, and the difference is given back or charged after it. A value
     * that is absent or no number from 0 to 2^52 keeps the estimate. Unset: the cost is charged.
     */
    private String costAfter;

    /** What a request this rule denies is answered with, over ratelimit.denied-response. */
    private final RateLimitProperties.Denied deniedResponse = new RateLimitProperties.Denied();

    public String getName() {
      return name;
    }

    public void setName(String name) {
      this.name = name;
    }

    public List<String> getPaths() {
      return paths;
    }

    public void setPaths(List<String> paths) {
      this.paths = paths;
    }

    public List<String> getMethods() {
      return methods;
    }

    public void setMethods(List<String> methods) {
      this.methods = methods;
    }

    public List<String> getPolicies() {
      return policies;
    }

    public void setPolicies(List<String> policies) {
      this.policies = policies;
    }

    public String getKey() {
      return key;
    }

    public void setKey(String key) {
      this.key = key;
    }

    public String getCost() {
      return cost;
    }

    public void setCost(String cost) {
      this.cost = cost;
    }

    public String getWhen() {
      return when;
    }

    public void setWhen(String when) {
      this.when = when;
    }

    public String getSkipWhen() {
      return skipWhen;
    }

    public void setSkipWhen(String skipWhen) {
      this.skipWhen = skipWhen;
    }

    public String getCountWhen() {
      return countWhen;
    }

    public void setCountWhen(String countWhen) {
      this.countWhen = countWhen;
    }

    public String getCostAfter() {
      return costAfter;
    }

    public void setCostAfter(String costAfter) {
      this.costAfter = costAfter;
    }

    public RateLimitProperties.Denied getDeniedResponse() {
      return deniedResponse;
    }
  }
}

package dev.ratelimit.spring;

import dev.ratelimit.http.DeniedResponse;
import dev.ratelimit.http.RateLimitRule;
import java.util.ArrayList;
import java.util.List;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * The filter rules of {@code ratelimit.filter.*}, for the servlet and the reactive filter alike;
 * no servlet or reactive type here, so that either side loads it without the other's API.
 */
final class FilterRules {
  private FilterRules() {}

  /** The property of the order Spring Boot gives Spring Security's filter chain (servlet and reactive), default -100. */
  private static final String SECURITY_FILTER_ORDER = "spring.security.filter.order";
  /** What Spring Security sets in its filter: the principal, and the request's view of the user. */
  private static final java.util.regex.Pattern USER = java.util.regex.Pattern.compile(
      "#principal\\b|#request\\s*\\.\\s*(remoteUser|userPrincipal|authType)\\b");

  /**
   * Refuses a rule that reads the user ({@code #principal}, {@code #request.remoteUser} ...)
   * when the filter runs before Spring Security (the default; {@code securityChain} names its chain
   * class): Spring Security sets the user in
   * its own filter, so every request would have none and share one bucket.
   */
  static void requirePrincipalKnown(RateLimitProperties properties, Environment environment, String securityChain) {
    int order = properties.getFilter().getOrder();
    int securityOrder = environment.getProperty(SECURITY_FILTER_ORDER, Integer.class, -100);
    if (order > securityOrder
        || !ClassUtils.isPresent(securityChain, RateLimitAutoConfiguration.class.getClassLoader())) {
      return;
    }
    List<FilterProperties.Rule> rules = properties.getFilter().getRules();
    for (int i = 0; i < rules.size(); i++) {
      FilterProperties.Rule rule = rules.get(i);
      String expression = String.join(" ", java.util.Arrays.asList(rule.getKey(), rule.getCost(), rule.getWhen(),
          rule.getSkipWhen(), rule.getCountWhen(), rule.getCostAfter()).stream().filter(java.util.Objects::nonNull).toList());
      if (USER.matcher(expression).find()) {
        throw new IllegalArgumentException("ratelimit.filter.rules[" + i + "] reads the user (#principal or "
            + "#request's user), but the filter runs before Spring Security (ratelimit.filter.order=" + order
            + ", Spring Security's " + securityOrder + "), which sets it: every request would have none. Set "
            + "ratelimit.filter.order above " + securityOrder + " to run after Spring Security (requests it "
            + "answers itself, such as its login, are then not limited by the filter), or key the rule otherwise");
      }
    }
  }

  static List<RateLimitRule> rules(RateLimitProperties properties, PolicyRegistry policies,
      DeniedResponse deniedResponse) {
    List<RateLimitRule> rules = new ArrayList<>();
    int index = 0;
    for (FilterProperties.Rule rule : properties.getFilter().getRules()) {
      rules.add(rule(rule, index++, policies, deniedResponse));
    }
    return rules;
  }

  private static RateLimitRule rule(FilterProperties.Rule rule, int index, PolicyRegistry policies,
      DeniedResponse deniedResponse) {
    String property = "ratelimit.filter.rules[" + index + "]";
    if (rule.getName() == null || rule.getName().isBlank()) {
      throw new IllegalArgumentException(property + ".name is required");
    }
    if (rule.getPolicies().isEmpty()) {
      throw new IllegalArgumentException(property + ".policies must name at least one policy");
    }
    try {
      RateLimitRule.Builder builder = RateLimitRule.builder(rule.getName()).key(rule.getKey()).cost(rule.getCost())
          .when(rule.getWhen()).skipWhen(rule.getSkipWhen()).countWhen(rule.getCountWhen())
          .costAfter(rule.getCostAfter());
      rule.getPaths().forEach(builder::path);
      rule.getMethods().forEach(builder::method);
      for (String name : rule.getPolicies()) {
        builder.policy(policies.get(name, property + ".policies"));
      }
      if (rule.getDeniedResponse().anySet()) {
        builder.deniedResponse(ConfiguredDeniedResponse.build(rule.getDeniedResponse(), deniedResponse,
            property + ".denied-response"));
      }
      return builder.build();
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("invalid " + property + conditionOf(rule.getName(), e) + ": " + e.getMessage(), e);
    }
  }

  /** {@code .skip-when} when {@code e} refuses the rule's condition of that name, else empty. */
  private static String conditionOf(String rule, IllegalArgumentException e) {
    for (String condition : List.of("count-when", "cost-after", "skip-when", "when")) {
      if (String.valueOf(e.getMessage()).startsWith("rule '" + rule + "': " + condition + " expression")) {
        return "." + condition;
      }
    }
    return "";
  }
}

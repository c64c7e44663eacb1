package dev.ratelimit.gateway;

import dev.ratelimit.Decision;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.internal.http.LimitHeaders;
import dev.ratelimit.http.HeaderOptions;
import dev.ratelimit.spring.PolicyRegistry;
import dev.ratelimit.webflux.EventLoops;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.springframework.cloud.gateway.filter.ratelimit.AbstractRateLimiter;
import org.springframework.cloud.gateway.support.ConfigurationService;
import reactor.core.publisher.Mono;

/**
 * A Spring Cloud Gateway {@link org.springframework.cloud.gateway.filter.ratelimit.RateLimiter}
 * (what the {@code RequestRateLimiter} filter calls) backed by this limiter: a route names one or
 * more policies of {@code ratelimit.policies.*}, any algorithm, checked together, all or nothing,
 * with {@link RateLimiter#checkAllAsync} (no thread waits), under the key {@code <route>:<id>} (the
 * id is what the route's {@code KeyResolver} gives). The response carries the IETF limit headers
 * ({@code RateLimit-Policy}, {@code RateLimit}; {@code X-RateLimit-*} with {@code
 * ratelimit.headers.legacy}) and on a denial {@code Retry-After}; when the backend fails, the
 * limiter's failure mode decides and no limit header is sent.
 *
 * <pre>{@code
 * spring.cloud.gateway.server.webflux.routes[0].filters[0].name=RequestRateLimiter
 * spring.cloud.gateway.server.webflux.routes[0].filters[0].args.ratelimit.policies=per-second,per-hour
 * }</pre>
 *
 * <p>A route without policies is refused on its first request, naming the property.
 */
public class PolicyRateLimiter extends AbstractRateLimiter<PolicyRateLimiter.Config> {
  /** The prefix of this limiter's arguments in a route's {@code RequestRateLimiter} filter. */
  public static final String CONFIGURATION_PROPERTY_NAME = "ratelimit";

  private final RateLimiter limiter;
  private final PolicyRegistry policies;
  private final HeaderOptions headers;

  /** A limiter of routes checking with {@code limiter}, the policies named in {@code policies}. */
  public PolicyRateLimiter(RateLimiter limiter, PolicyRegistry policies, HeaderOptions headers,
      ConfigurationService configurationService) {
    super(Config.class, CONFIGURATION_PROPERTY_NAME, configurationService);
    this.limiter = Objects.requireNonNull(limiter, "limiter");
    this.policies = Objects.requireNonNull(policies, "policies");
    this.headers = Objects.requireNonNull(headers, "headers");
  }

  @Override
  public Mono<Response> isAllowed(String routeId, String id) {
    // the route goes on on the server's event loop, not the backend's I/O thread (see EventLoops)
    return EventLoops.onSubscribingLoop(Mono.defer(() -> {
      List<Policy> checked = policiesOf(routeId);
      return Mono.fromCompletionStage(limiter.checkAllAsync(routeId + ":" + id, checked, 1));
    })).map(this::response);
  }

  private Response response(MultiDecision decision) {
    List<Decision> decisions = decision.decisions();
    Map<String, String> fields = decision.allowed()
        ? LimitHeaders.fields(decisions, headers.draft(), headers.legacy(), Long.MAX_VALUE)
        : LimitHeaders.deniedFields(decisions, headers.draft(), headers.legacy());
    return new Response(decision.allowed(), fields);
  }

  /** The route's policies, by name, with their current numbers (updates apply). */
  private List<Policy> policiesOf(String routeId) {
    Config config = getConfig().get(routeId);
    String property = "spring.cloud.gateway.server.webflux.routes[id=" + routeId + "].filters[RequestRateLimiter]"
        + ".args." + CONFIGURATION_PROPERTY_NAME + ".policies";
    if (config == null || config.getPolicies().isEmpty()) {
      throw new IllegalArgumentException(property + " must name at least one policy of ratelimit.policies");
    }
    List<Policy> list = new ArrayList<>(config.getPolicies().size());
    for (String name : config.getPolicies()) {
      list.add(policies.get(name.strip(), property));
    }
    return list;
  }

  /** A route's arguments: {@code ratelimit.policies}, names of {@code ratelimit.policies.*}. */
  public static class Config {
    private List<String> policies = new ArrayList<>();

    /** The names of the policies the route checks together. */
    public List<String> getPolicies() {
      return policies;
    }

    public void setPolicies(List<String> policies) {
      this.policies = policies;
    }
  }
}

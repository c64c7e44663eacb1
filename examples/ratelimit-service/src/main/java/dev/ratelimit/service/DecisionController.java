package dev.ratelimit.service;

import dev.ratelimit.Decision;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.http.HeaderOptions;
import dev.ratelimit.servlet.RateLimitResponses;
import dev.ratelimit.spring.PolicyRegistry;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * The decision API. An allowed check is {@code 200}, a denied one {@code 429} (a problem body
 * that holds the same decision members); both carry the limit headers ({@code RateLimit},
 * {@code RateLimit-Policy}; {@code Retry-After} when denied), so a caller can copy them onto its own
 * response. Bad input is {@code 400} (see {@link ApiErrors}).
 */
@RestController
@RequestMapping(path = "/v1")
class DecisionController {
  private static final TypeReference<Map<String, Object>> MAP = new TypeReference<>() {};

  private final RateLimiter limiter;
  private final PolicyRegistry policies;
  private final HeaderOptions headers;
  private final JsonMapper json;
  private final ReservationTokens tokens;
  private final SettledTokens settled;

  DecisionController(RateLimiter limiter, PolicyRegistry policies, HeaderOptions headers, JsonMapper json,
      ReservationTokens tokens, SettledTokens settled) {
    this.limiter = limiter;
    this.policies = policies;
    this.headers = headers;
    this.json = json;
    this.tokens = tokens;
    this.settled = settled;
  }

  /** Checks (and, when allowed, consumes) {@code cost} units of {@code key} under one policy. */
  @PostMapping(path = "/check", consumes = "application/json")
  ResponseEntity<Object> check(@RequestBody Api.CheckRequest request, HttpServletRequest http,
      HttpServletResponse response) {
    String key = requireKey(request.key());
    Policy policy = policy(request.policy(), "policy");
    long cost = cost(request.cost(), List.of(policy));
    Decision decision = limiter.check(key, policy, cost);
    return answer(List.of(decision), decision.allowed(), Api.DecisionBody.of(decision), http, response);
  }

  /** Checks several policies at once: all pass and all consume, or none consumes. */
  @PostMapping(path = "/check-all", consumes = "application/json")
  ResponseEntity<Object> checkAll(@RequestBody Api.CheckAllRequest request, HttpServletRequest http,
      HttpServletResponse response) {
    String key = requireKey(request.key());
    List<Policy> checked = policies(request.policies());
    long cost = cost(request.cost(), checked);
    MultiDecision multi = limiter.checkAll(key, checked, cost);
    return answer(multi.decisions(), multi.allowed(), Api.CheckAllBody.of(multi), http, response);
  }

  /**
   * Takes {@code estimate} units of one policy or several, all or nothing, decided as a check of
   * that cost would be; an allowed answer carries the token that settles it ({@code /v1/commit},
   * {@code /v1/cancel}) once, on any instance sharing the secret, before it expires.
   */
  @PostMapping(path = "/reserve", consumes = "application/json")
  ResponseEntity<Object> reserve(@RequestBody Api.ReserveRequest request, HttpServletRequest http,
      HttpServletResponse response) {
    String key = requireKey(request.key());
    if (request.policy() != null && request.policies() != null) {
      throw new BadRequest("policies", "give policy (one name) or policies (a list), not both");
    }
    List<Policy> reserved = request.policy() != null || request.policies() == null
        ? List.of(policy(request.policy(), "policy")) : policies(request.policies());
    if (request.estimate() == null) {
      throw new BadRequest("estimate", "estimate is required: the units to take now, a whole number of at least 1"
          + " (commit settles the actual cost later)");
    }
    long estimate = cost(request.estimate(), reserved, "estimate");
    Reservation reservation = limiter.reserve(key, reserved, estimate);
    MultiDecision multi = reservation.decisions();
    if (!multi.allowed()) {
      return answer(multi.decisions(), false, Api.CheckAllBody.of(multi), http, response);
    }
    ReservationTokens.Issued issued = tokens.issue(reservation);
    Api.CheckAllBody decided = Api.CheckAllBody.of(multi);
    return answer(multi.decisions(), true, new Api.ReservedBody(true, decided.limiting(), decided.decisions(),
        estimate, issued.token(), issued.expiresAt().toString()), http, response);
  }

  /**
   * Settles a reservation at its actual cost: the surplus given back when lower, the difference
   * charged (whatever the limit) when higher. A token is settled once.
   */
  @PostMapping(path = "/commit", consumes = "application/json")
  Api.SettledBody commit(@RequestBody Api.CommitRequest request, HttpServletResponse response) {
    ReservationTokens.Verified token = tokens.read(request.token(), name -> policies.find(name).orElse(null));
    Long actual = request.actual();
    if (actual == null || actual < 1 || actual > Reservation.MAX_COST) {
      throw new BadRequest("actual", actual == null || actual != 0
          ? "actual is required: the actual cost, a whole number from 1 to 2^52, got " + actual
          : "actual must be at least 1, got 0: to give the whole estimate back, POST the token to /v1/cancel");
    }
    Reservation reservation = settle(token);
    reservation.commit(actual);
    confirmed(reservation);
    response.setHeader("Cache-Control", "no-store");
    return new Api.SettledBody("committed", token.estimate(), actual);
  }

  /** Gives a reservation's whole estimate back. A token is settled once. */
  @PostMapping(path = "/cancel", consumes = "application/json")
  Api.SettledBody cancel(@RequestBody Api.CancelRequest request, HttpServletResponse response) {
    ReservationTokens.Verified token = tokens.read(request.token(), name -> policies.find(name).orElse(null));
    Reservation reservation = settle(token);
    reservation.cancel();
    confirmed(reservation);
    response.setHeader("Cache-Control", "no-store");
    return new Api.SettledBody("cancelled", token.estimate(), null);
  }

  /** Refuses to answer "settled" for a settle that could not reach the backend. */
  private static void confirmed(Reservation reservation) {
    if (reservation.settleFailed()) {
      throw new SettleUnconfirmed();
    }
  }

  /** The token's reservation, once its identity is recorded as settled; refused when it was before. */
  private Reservation settle(ReservationTokens.Verified token) {
    if (!settled.claim(token.id())) {
      throw new BadRequest("token", "token was already settled: a reservation is settled once (by commit or"
          + " cancel, on any instance); nothing changed");
    }
    return limiter.resume(token.key(), token.policies(), token.estimate(), token.marks());
  }

  private List<Policy> policies(List<String> requested) {
    if (requested == null || requested.isEmpty()) {
      throw new BadRequest("policies", "policies is required: a non-empty list of policy names, e.g. "
          + "[\"per-user\", \"per-user-daily\"]; configured: " + policies.all().keySet());
    }
    Set<String> names = new LinkedHashSet<>();
    List<Policy> checked = new ArrayList<>();
    for (int i = 0; i < requested.size(); i++) {
      String name = requested.get(i);
      if (!names.add(name)) {
        throw new BadRequest("policies[" + i + "]", "policy '" + name + "' is listed twice");
      }
      checked.add(policy(name, "policies[" + i + "]"));
    }
    return checked;
  }

  /**
   * An allowed answer is {@code 200} with the decision; a denied one is {@code 429} with the same
   * members inside an RFC 9457 problem ({@code quota-exceeded}, {@code violated-policies}), as
   * ARCHITECTURE §7 asks of every denial. Both carry the limit headers and {@code no-store}.
   */
  private ResponseEntity<Object> answer(List<Decision> decisions, boolean allowed, Object body,
      HttpServletRequest http, HttpServletResponse response) {
    if (allowed) {
      RateLimitResponses.writeHeaders(response, decisions, headers);
      response.setHeader("Cache-Control", "no-store");
      return ResponseEntity.ok().contentType(MediaType.APPLICATION_JSON).body(body);
    }
    RateLimitResponses.writeDeniedHeaders(response, decisions, headers);
    Map<String, Object> problem = new LinkedHashMap<>();
    problem.putAll(json.readValue(RateLimitResponses.problemJson(decisions, http.getRequestURI()), MAP));
    problem.putAll(json.convertValue(body, MAP));
    return ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS).contentType(MediaType.APPLICATION_PROBLEM_JSON)
        .body(problem);
  }

  /** Every configured policy, in configuration order. */
  @GetMapping("/policies")
  List<Api.PolicyBody> policies() {
    return policies.all().values().stream().map(Api.PolicyBody::of).toList();
  }

  /**
   * The state of {@code key} under {@code policy} now, as the decision a cost-1 check would get;
   * consumes nothing. The key is the rest of the path, slashes included.
   */
  @GetMapping("/inspect/{policy}/{*key}")
  Api.DecisionBody inspect(@PathVariable("policy") String policyName, @PathVariable("key") String pathKey,
      HttpServletRequest http, HttpServletResponse response) {
    Policy policy = policy(policyName, "policy");
    return inspect(pathKey(pathKey, http), policy, response);
  }

  /**
   * {@link #inspect(String, String, HttpServletRequest, HttpServletResponse) inspect} with the key in
   * the body: any key a check accepts, also those no path can carry (a NUL, a lone surrogate, 8 KB
   * and more).
   */
  @PostMapping(path = "/inspect", consumes = "application/json")
  Api.DecisionBody inspect(@RequestBody Api.KeyRequest request, HttpServletResponse response) {
    String key = requireKey(request.key());
    return inspect(key, policy(request.policy(), "policy"), response);
  }

  private Api.DecisionBody inspect(String key, Policy policy, HttpServletResponse response) {
    response.setHeader("Cache-Control", "no-store");
    try {
      return Api.DecisionBody.of(limiter.inspect(key, policy));
    } catch (RuntimeException e) {
      throw new BackendUnavailable(e);
    }
  }

  /** Forgets the state of {@code key} under {@code policy}: its next check starts fresh. */
  @DeleteMapping("/keys/{policy}/{*key}")
  ResponseEntity<Void> reset(@PathVariable("policy") String policyName, @PathVariable("key") String pathKey,
      HttpServletRequest http) {
    Policy policy = policy(policyName, "policy");
    return reset(pathKey(pathKey, http), policy);
  }

  /** {@link #reset(String, String, HttpServletRequest) reset} with the key in the body, any key a check accepts. */
  @PostMapping(path = "/reset", consumes = "application/json")
  ResponseEntity<Void> reset(@RequestBody Api.KeyRequest request) {
    String key = requireKey(request.key());
    return reset(key, policy(request.policy(), "policy"));
  }

  private ResponseEntity<Void> reset(String key, Policy policy) {
    try {
      limiter.reset(key, policy);
    } catch (RuntimeException e) {
      throw new BackendUnavailable(e);
    }
    return ResponseEntity.noContent().build();
  }

  /**
   * The key of a path, refused when the path holds a raw {@code ;}: the container and Spring cut a
   * segment's {@code ;...} off as path parameters, so {@code sess;42} would arrive as {@code sess},
   * another client's key (and a reset would clear its state). Percent-encoded, {@code %3B}, it
   * arrives whole.
   */
  private static String pathKey(String pathKey, HttpServletRequest http) {
    if (http.getRequestURI().indexOf(';') >= 0) {
      throw new BadRequest("key", "a raw ';' in the path is cut off as a path parameter, leaving another key:"
          + " percent-encode the key (encodeURIComponent), ';' as %3B");
    }
    return requireKey(pathKey.startsWith("/") ? pathKey.substring(1) : pathKey);
  }

  private static String requireKey(String key) {
    if (key == null || key.isBlank()) {
      throw new BadRequest("key", "key is required: a non-empty string naming who or what is limited, e.g. \"user:42\"");
    }
    return key;
  }

  private Policy policy(String name, String field) {
    if (name == null || name.isEmpty()) {
      throw new BadRequest(field, field + " is required: the name of a configured policy, one of "
          + policies.all().keySet());
    }
    return policies.find(name).orElseThrow(() -> new BadRequest(field, "unknown policy '" + name
        + "'; configured policies (ratelimit.policies.*): " + policies.all().keySet()));
  }

  private static long cost(Long cost, List<Policy> checked) {
    return cost == null ? 1 : cost(cost, checked, "cost");
  }

  private static long cost(long cost, List<Policy> checked, String field) {
    if (cost < 1) {
      throw new BadRequest(field, field + " must be at least 1, got " + cost
          + (field.equals("cost") ? " (omit it for 1)" : ""));
    }
    for (Policy policy : checked) {
      if (cost > policy.capacity()) {
        throw new BadRequest(field, field + " " + cost + " exceeds the capacity " + policy.capacity() + " of policy '"
            + policy.name() + "' (its limit, or its burst for TOKEN_BUCKET, GCRA, LEAKY_BUCKET): it could never pass");
      }
    }
    return cost;
  }
}

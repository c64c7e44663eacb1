package dev.ratelimit.service.envoy;

import com.google.protobuf.Duration;
import dev.ratelimit.Decision;
import dev.ratelimit.KeyedPolicy;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.http.HeaderOptions;
import dev.ratelimit.servlet.RateLimitResponses;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.DescriptorStatus;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit}: each descriptor of the
 * request finds its rule in the {@link EnvoyConfig}, and is checked against the rule's policy under
 * its own key (the domain and the descriptor's entries); the request's enforced descriptors are
 * checked together, all or nothing, in one backend round trip ({@link #decide}), and the answer is
 * {@code OVER_LIMIT} when any of them is over its limit, with nothing counted for the others.
 * Checks go through the limiter's non-blocking path, so no gRPC thread waits for Redis; the
 * limiter's timeout and failure mode apply (FAIL_OPEN answers OK, FAIL_CLOSED OVER_LIMIT).
 *
 * <p>Defined answers for bad input (see docs/envoy.md): an empty domain or descriptor list is
 * {@code INVALID_ARGUMENT}, as the reference service refuses both; an unknown domain, or a
 * descriptor that reaches no rule, is OK with no limit; a cost above a rule's capacity, or a rule of
 * 0 requests per unit, is OVER_LIMIT without touching the backend.
 */
final class RateLimitService extends RateLimitServiceGrpc.RateLimitServiceImplBase {
  private static final Logger log = LoggerFactory.getLogger(RateLimitService.class);
  /** {@code limit_remaining} of an unlimited descriptor, as the reference answers: uint32's largest. */
  private static final int MAX_UINT32 = -1;

  private final RateLimiter limiter;
  private final EnvoyConfig config;
  private final HeaderOptions headerOptions;
  private final boolean responseHeaders;
  private final int maxDescriptors;
  private final int maxEntries;
  private final java.time.InstantSource clock;

  RateLimitService(RateLimiter limiter, EnvoyConfig config, HeaderOptions headerOptions, boolean responseHeaders,
      int maxDescriptors, int maxEntries, java.time.InstantSource clock) {
    this.limiter = limiter;
    this.config = config;
    this.headerOptions = headerOptions;
    this.responseHeaders = responseHeaders;
    this.maxDescriptors = maxDescriptors;
    this.maxEntries = maxEntries;
    this.clock = clock;
  }

  /**
   * Why {@code request} is beyond the configured bounds, or null: a request with thousands of
   * descriptors held the backend for seconds, so it is refused before any work.
   */
  private String beyondBounds(RateLimitRequest request) {
    if (request.getDescriptorsCount() > maxDescriptors) {
      return "the request has " + request.getDescriptorsCount() + " descriptors, more than " + maxDescriptors
          + " (ratelimit-service.grpc.max-descriptors)";
    }
    for (int i = 0; i < request.getDescriptorsCount(); i++) {
      int entries = request.getDescriptors(i).getEntriesCount();
      if (entries > maxEntries) {
        return "descriptor " + i + " has " + entries + " entries, more than " + maxEntries
            + " (ratelimit-service.grpc.max-entries)";
      }
    }
    return null;
  }

  @Override
  public void shouldRateLimit(RateLimitRequest request, StreamObserver<RateLimitResponse> responses) {
    CompletionStage<RateLimitResponse> answer;
    try {
      if (request.getDomain().isEmpty()) {
        responses.onError(Status.INVALID_ARGUMENT.withDescription("domain must not be empty: name a domain of the"
            + " rate limit configuration, one of " + config.domains()).asRuntimeException());
        return;
      }
      if (request.getDescriptorsCount() == 0) {
        responses.onError(Status.INVALID_ARGUMENT.withDescription("descriptors must not be empty: a request needs"
            + " at least one descriptor to check").asRuntimeException());
        return;
      }
      String beyond = beyondBounds(request);
      if (beyond != null) {
        responses.onError(Status.INVALID_ARGUMENT.withDescription(beyond).asRuntimeException());
        return;
      }
      answer = decide(request);
    } catch (RuntimeException e) {
      answer = CompletableFuture.failedFuture(e);
    }
    answer.whenComplete((response, error) -> {
      if (error != null) {
        // a fault of this service's own, never a backend's (the limiter's failure mode answers those)
        log.error("ShouldRateLimit failed for domain '{}'", request.getDomain(), error);
        responses.onError(Status.INTERNAL.withDescription("the rate limit service failed: its log has the error")
            .asRuntimeException());
        return;
      }
      try {
        responses.onNext(response);
        responses.onCompleted();
      } catch (RuntimeException e) { // the caller went away (cancelled, past its deadline): nobody to answer
        log.debug("ShouldRateLimit answer not sent: {}", e.toString());
      }
    });
  }

  /**
   * One descriptor's part of the answer: its rule, and its decision once known. The decision
   * completes with null when the descriptor was not checked: no rule, an unlimited one, one that
   * never passes ({@code refused}: 0 requests per unit, a cost above the capacity), or an enforced
   * one left unchecked because another descriptor of the request was refused.
   */
  private record Part(EnvoyConfig.Match match, CompletableFuture<Decision> decision, boolean refused) {}

  /** Enforced descriptors checked together: one cost, each (key, rule) once. */
  private record Round(long cost, List<KeyedPolicy> pairs, List<CompletableFuture<Decision>> decisions) {
    Round(long cost) {
      this(cost, new ArrayList<>(), new ArrayList<>());
    }

    boolean takes(long cost, KeyedPolicy pair) {
      if (cost != this.cost) {
        return false;
      }
      for (KeyedPolicy p : pairs) {
        if (p.key().equals(pair.key()) && p.policy().name().equals(pair.policy().name())) {
          return false; // the same descriptor twice: counted twice, as the reference does, in a later round
        }
      }
      return true;
    }

    void complete(MultiDecision decision) {
      for (int i = 0; i < decisions.size(); i++) {
        decisions.get(i).complete(decision.decisions().get(i));
      }
    }

    void skip() {
      decisions.forEach(d -> d.complete(null));
    }
  }

  /**
   * Checks the request's enforced descriptors all or nothing: one {@code checkAll} across their
   * keys (one backend round trip) when they share a cost, as they do unless a descriptor has a
   * {@code hits_addend} of its own; a descriptor that can never pass leaves the others unchecked.
   * Shadow-mode rules are checked on their own, counted, never refusing; a cost of 0 peeks.
   */
  private CompletionStage<RateLimitResponse> decide(RateLimitRequest request) {
    int n = request.getDescriptorsCount();
    List<EnvoyConfig.Match> matches = new ArrayList<>(n);
    Set<String> replaced = new HashSet<>();
    for (RateLimitDescriptor descriptor : request.getDescriptorsList()) {
      EnvoyConfig.Match match = config.match(request.getDomain(), descriptor);
      matches.add(match);
      if (match != null) {
        replaced.addAll(match.rule().replaces());
      }
    }
    List<Part> parts = new ArrayList<>(n);
    List<Round> rounds = new ArrayList<>();
    List<CompletableFuture<Decision>> others = new ArrayList<>(); // shadow rules and peeks
    boolean neverPasses = false;
    for (int i = 0; i < n; i++) {
      EnvoyConfig.Match match = matches.get(i);
      if (match != null && !match.rule().unlimited() && replaced.contains(match.rule().name())) {
        match = null; // another matching rule replaces this one: it is not evaluated (an unlimited one stays)
      }
      long cost = cost(request, request.getDescriptors(i));
      Rule rule = match == null ? null : match.rule();
      if (rule == null || rule.unlimited()) {
        parts.add(new Part(match, CompletableFuture.completedFuture(null), false));
      } else if (rule.policy() == null || cost > rule.policy().capacity()) {
        parts.add(new Part(match, CompletableFuture.completedFuture(null), true));
        neverPasses |= !rule.shadow();
      } else if (rule.shadow() || cost == 0) {
        CompletableFuture<Decision> decision = alone(match, cost).toCompletableFuture();
        others.add(decision);
        parts.add(new Part(match, decision, false));
      } else {
        CompletableFuture<Decision> decision = new CompletableFuture<>();
        KeyedPolicy pair = KeyedPolicy.of(match.key(), rule.policy());
        Round round = rounds.stream().filter(r -> r.takes(cost, pair)).findFirst().orElseGet(() -> {
          Round fresh = new Round(cost);
          rounds.add(fresh);
          return fresh;
        });
        round.pairs().add(pair);
        round.decisions().add(decision);
        parts.add(new Part(match, decision, false));
      }
    }
    // rounds one after another, stopping at the first refusal: later ones consume nothing
    CompletableFuture<Boolean> passing = CompletableFuture.completedFuture(!neverPasses);
    for (Round round : rounds) {
      passing = passing.thenCompose(allowed -> {
        if (!allowed) {
          round.skip();
          return CompletableFuture.completedFuture(false);
        }
        return limiter.checkAllAsync(round.pairs(), round.cost()).thenApply(decision -> {
          round.complete(decision);
          return decision.allowed();
        });
      });
    }
    return passing.thenCompose(done -> CompletableFuture.allOf(others.toArray(CompletableFuture[]::new)))
        .thenApply(done -> answer(parts));
  }

  /**
   * A descriptor checked on its own: a shadow-mode rule (counted, never refusing), or a cost of 0 (a
   * descriptor's {@code hits_addend: 0}, which the reference service reads as "check without
   * counting"), which peeks: nothing is consumed.
   */
  private CompletionStage<Decision> alone(EnvoyConfig.Match match, long cost) {
    if (cost == 0) {
      return CompletableFuture.completedFuture(
          limiter.peekAll(match.key(), List.of(match.rule().policy()), 1).decisions().get(0));
    }
    return limiter.checkAsync(match.key(), match.rule().policy(), cost);
  }

  /**
   * The cost of a descriptor: its own {@code hits_addend} when set (0 included), else the
   * request's, 0 meaning 1 (the reference service's reading). A value beyond a {@code long} is
   * above every capacity.
   */
  static long cost(RateLimitRequest request, RateLimitDescriptor descriptor) {
    if (descriptor.hasHitsAddend()) {
      long value = descriptor.getHitsAddend().getValue();
      return value < 0 ? Long.MAX_VALUE : value;
    }
    return Math.max(1, Integer.toUnsignedLong(request.getHitsAddend()));
  }

  private RateLimitResponse answer(List<Part> parts) {
    RateLimitResponse.Builder response = RateLimitResponse.newBuilder();
    boolean over = false;
    List<Decision> enforced = new ArrayList<>();
    for (Part part : parts) {
      DescriptorStatus.Builder status = DescriptorStatus.newBuilder().setCode(Code.OK);
      EnvoyConfig.Match match = part.match();
      if (match != null) {
        Rule rule = match.rule();
        if (rule.unlimited()) {
          status.setLimitRemaining(MAX_UINT32);
        } else {
          status.setCurrentLimit(rule.currentLimit());
          boolean passes;
          Decision decision = part.decision().join();
          if (decision == null) { // never passes (refused), or left unchecked after another's refusal
            passes = !part.refused();
            if (part.refused() && rule.blocks() && rule.unit() != null) {
              // requests_per_unit 0: as the reference answers, the time to the end of the unit's window
              status.setDurationUntilReset(duration(untilUnitEndsMicros(rule.unit())));
            }
          } else {
            passes = decision.allowed();
            if (!decision.isDegraded()) {
              status.setLimitRemaining((int) Math.min(Math.max(0, decision.remaining()), 0xFFFF_FFFFL));
              long micros = passes ? decision.resetAfterMicros() : decision.retryAfterMicros();
              status.setDurationUntilReset(duration(micros));
            }
            if (!rule.shadow()) {
              enforced.add(decision);
            }
          }
          if (!passes && !rule.shadow()) { // a shadow rule is checked and counted, never refusing
            status.setCode(Code.OVER_LIMIT);
            over = true;
          }
        }
      }
      response.addStatuses(status);
    }
    response.setOverallCode(over ? Code.OVER_LIMIT : Code.OK);
    if (responseHeaders) {
      RateLimitResponses.headerFields(enforced, headerOptions, over).forEach((name, value) ->
          response.addResponseHeadersToAdd(HeaderValue.newBuilder().setKey(name).setValue(value)));
    }
    return response.build();
  }

  /** Microseconds from now to the end of the current window of {@code unit}, windows aligned to the epoch. */
  private long untilUnitEndsMicros(RateLimitResponse.RateLimit.Unit unit) {
    long unitMicros = EnvoyConfig.seconds(unit) * 1_000_000L;
    long now = clock.millis() * 1_000L;
    return unitMicros - Math.floorMod(now, unitMicros);
  }

  private static Duration duration(long micros) {
    return Duration.newBuilder().setSeconds(micros / 1_000_000).setNanos((int) (micros % 1_000_000) * 1_000).build();
  }
}

package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Decision;
import dev.ratelimit.KeyedPolicy;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.annotation.RateLimitExceededException;
import dev.ratelimit.tck.redis.RedisServer;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The Observation around each check: its name, its low-cardinality keys, and never the key. */
class RateLimitObservationTest {
  private static final String KEY = "user:secret-42";
  private static final Policy API = Policy.of(1, Duration.ofMinutes(1)).withName("api");
  private static final Policy WIDE = Policy.of(100, Duration.ofMinutes(1)).withName("wide");

  private final TestObservationRegistry registry = TestObservationRegistry.create();
  private final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();

  RateLimitObservationTest() {
    registry.observationConfig().observationHandler(new ObservationHandler<>() {
      @Override
      public void onStop(Observation.Context context) {
        stopped.add(context);
      }

      @Override
      public boolean supportsContext(Observation.Context context) {
        return true;
      }
    });
  }

  private RateLimiter observed(RateLimiter.Builder builder) {
    return RateLimitObservation.observe(builder.listener(RateLimitObservation.outcomes()).build(), registry);
  }

  private static Map<String, String> lowCardinality(Observation.Context context) {
    return context.getLowCardinalityKeyValues().stream().collect(Collectors.toMap(KeyValue::getKey, KeyValue::getValue));
  }

  /** The key never appears: not as a key value of either cardinality, nor in the names. */
  private void assertKeyNeverAppears() {
    assertThat(stopped).isNotEmpty().allSatisfy(context -> {
      assertThat(context.getAllKeyValues().stream()).noneMatch(kv -> kv.getValue().contains("secret"));
      assertThat(context.getHighCardinalityKeyValues()).isEmpty();
      assertThat(context.getName()).doesNotContain("secret");
      assertThat(String.valueOf(context.getContextualName())).doesNotContain("secret");
    });
  }

  @Test
  void eachCheckIsAnObservationWithPolicyDecisionAndOutcome() {
    RateLimiter limiter = observed(RateLimiter.builder());
    assertThat(limiter.check(KEY, API).allowed()).isTrue();
    assertThat(limiter.check(KEY, API).allowed()).isFalse();
    assertThat(limiter.tryAcquire(KEY, API)).isFalse();

    TestObservationRegistryAssert.assertThat(registry)
        .hasNumberOfObservationsWithNameEqualTo(RateLimitObservation.NAME, 3)
        .hasObservationWithNameEqualTo(RateLimitObservation.NAME).that().hasBeenStarted().hasBeenStopped();
    assertThat(stopped).extracting(RateLimitObservationTest::lowCardinality).containsExactly(
        Map.of("ratelimit.policy", "api", "ratelimit.decision", "allowed", "ratelimit.outcome", "allowed"),
        Map.of("ratelimit.policy", "api", "ratelimit.decision", "denied", "ratelimit.outcome", "denied"),
        Map.of("ratelimit.policy", "api", "ratelimit.decision", "denied", "ratelimit.outcome", "denied"));
    assertKeyNeverAppears();
  }

  @Test
  void aShadowPolicysDenialIsAllowedWithItsOutcome() {
    RateLimiter shadow = observed(RateLimiter.builder().shadowPolicies(java.util.Set.of("api")));
    shadow.check(KEY, API);
    Decision shadowed = shadow.check(KEY, API);

    assertThat(shadowed.allowed()).isTrue();
    assertThat(stopped).extracting(c -> lowCardinality(c).get("ratelimit.outcome"))
        .containsExactly("allowed", "shadow_denied");
    assertThat(stopped).extracting(c -> lowCardinality(c).get("ratelimit.decision"))
        .containsExactly("allowed", "allowed");
    assertKeyNeverAppears();
  }

  @Test
  void withoutTheOutcomesListenerTheOutcomeIsTheDecisions() {
    RateLimiter limiter = RateLimitObservation.observe(
        RateLimiter.builder().shadowPolicies(java.util.Set.of("api")).build(), registry);
    limiter.check(KEY, API);
    limiter.check(KEY, API); // a shadow denial, unknown without the listener
    assertThat(stopped).extracting(c -> lowCardinality(c).get("ratelimit.outcome"))
        .containsExactly("allowed", "allowed");
  }

  @Test
  void checkAllNamesItsPoliciesAndTheLimitingOutcome() {
    RateLimiter limiter = observed(RateLimiter.builder());
    MultiDecision first = limiter.checkAll(KEY, List.of(WIDE, API), 1);
    MultiDecision second = limiter.checkAll(KEY, List.of(WIDE, API), 1);
    assertThat(first.allowed()).isTrue();
    assertThat(second.allowed()).isFalse();
    assertThat(stopped).extracting(RateLimitObservationTest::lowCardinality).containsExactly(
        Map.of("ratelimit.policy", "wide,api", "ratelimit.decision", "allowed", "ratelimit.outcome", "allowed"),
        Map.of("ratelimit.policy", "wide,api", "ratelimit.decision", "denied", "ratelimit.outcome", "denied"));
    assertKeyNeverAppears();
  }

  /** The observed limiter passes checks across keys on (the interface's default would refuse them), observed. */
  @Test
  void checkAllAcrossKeysIsPassedOnAndObserved() {
    RateLimiter limiter = observed(RateLimiter.builder());
    List<KeyedPolicy> checks = List.of(KeyedPolicy.of(KEY, WIDE), KeyedPolicy.of("tenant:secret-7", API));
    assertThat(limiter.checkAll(checks, 1).allowed()).isTrue();
    assertThat(limiter.checkAllAsync(checks, 1).toCompletableFuture().join().allowed()).isFalse();
    assertThat(limiter.inspect(KEY, WIDE).remaining()).as("the denial consumed nothing").isEqualTo(99);
    assertThat(stopped).extracting(RateLimitObservationTest::lowCardinality).containsExactly(
        Map.of("ratelimit.policy", "wide,api", "ratelimit.decision", "allowed", "ratelimit.outcome", "allowed"),
        Map.of("ratelimit.policy", "wide,api", "ratelimit.decision", "denied", "ratelimit.outcome", "denied"));
    assertKeyNeverAppears();
  }

  /** A reservation is observed as a check of its estimate, sync, async and across keys; its settle is not. */
  @Test
  void reservationsAreObservedAsChecksOfTheirEstimate() {
    RateLimiter limiter = observed(RateLimiter.builder());
    Reservation first = limiter.reserve(KEY, API, 1);
    assertThat(first.allowed()).isTrue();
    assertThat(limiter.reserveAsync(KEY, List.of(WIDE, API), 1).toCompletableFuture().join().allowed()).isFalse();
    first.cancel();
    assertThat(limiter.reserve(List.of(KeyedPolicy.of(KEY, API), KeyedPolicy.of("tenant:secret-7", WIDE)), 1)
        .allowed()).isTrue();
    assertThat(stopped).extracting(RateLimitObservationTest::lowCardinality).containsExactly(
        Map.of("ratelimit.policy", "api", "ratelimit.decision", "allowed", "ratelimit.outcome", "allowed"),
        Map.of("ratelimit.policy", "wide,api", "ratelimit.decision", "denied", "ratelimit.outcome", "denied"),
        Map.of("ratelimit.policy", "api,wide", "ratelimit.decision", "allowed", "ratelimit.outcome", "allowed"));
    assertKeyNeverAppears();
  }

  /**
   * Every method of the interface is the observed limiter's own, passed on: a default it inherited
   * would answer through other methods, without what the wrapped limiter does its own way.
   */
  @Test
  void everyMethodOfTheInterfaceIsPassedOn() {
    for (Method method : RateLimiter.class.getMethods()) {
      if (!Modifier.isStatic(method.getModifiers())) {
        assertThatCode(() -> ObservedRateLimiter.class.getDeclaredMethod(method.getName(), method.getParameterTypes()))
            .as("ObservedRateLimiter declares %s", method).doesNotThrowAnyException();
      }
    }
  }

  /**
   * peekAll is the wrapped limiter's, whose shadow policy never denies a peek; the interface's
   * default, from inspect, would deny it. Not a check: not observed.
   */
  @Test
  void peekAllIsTheWrappedLimitersAndUnobserved() {
    RateLimiter plain = RateLimiter.builder().clock(dev.ratelimit.ManualClock.at(java.time.Instant.EPOCH))
        .shadowPolicies(java.util.Set.of("api")).build();
    RateLimiter limiter = RateLimitObservation.observe(plain, registry);
    assertThat(plain.check(KEY, API).allowed()).isTrue(); // the one unit of the minute
    assertThat(plain.inspect(KEY, API).allowed()).as("what the default would answer from").isFalse();

    MultiDecision peek = limiter.peekAll(KEY, List.of(API), 1);
    assertThat(peek.allowed()).as("a shadow policy's peek is allowed").isTrue();
    assertThat(peek).isEqualTo(plain.peekAll(KEY, List.of(API), 1));
    assertThat(stopped).isEmpty();
  }

  @Test
  void checkAsyncIsObservedUntilItsAnswer() {
    RateLimiter limiter = observed(RateLimiter.builder());
    assertThat(limiter.checkAsync(KEY, API, 1).toCompletableFuture().join().allowed()).isTrue();
    assertThat(limiter.checkAsync(KEY, API, 1).toCompletableFuture().join().allowed()).isFalse();
    assertThat(stopped).extracting(c -> lowCardinality(c).get("ratelimit.decision")).containsExactly("allowed", "denied");
    assertKeyNeverAppears();
  }

  @Test
  void aRefusedCheckIsAnObservationWithItsError() {
    RateLimiter limiter = observed(RateLimiter.builder());
    assertThatThrownBy(() -> limiter.check(KEY, API, 5)).isInstanceOf(IllegalArgumentException.class);
    assertThat(stopped).singleElement().satisfies(context -> {
      assertThat(context.getError()).isInstanceOf(IllegalArgumentException.class);
      assertThat(lowCardinality(context)).containsEntry("ratelimit.policy", "api").doesNotContainKey("ratelimit.decision");
    });
  }

  @Test
  void aNoopRegistryObservesNothingAndChangesNothing() {
    RateLimiter limiter = RateLimitObservation.observe(RateLimiter.builder().build(), ObservationRegistry.NOOP);
    assertThat(limiter.check(KEY, API).allowed()).isTrue();
    assertThat(limiter.checkAll(KEY, List.of(API), 1).allowed()).isFalse();
    assertThat(limiter.tryAcquire(KEY, API)).isFalse();
    assertThat(stopped).isEmpty();
  }

  @Test
  void policyValuesAreBounded() {
    RateLimiter limiter = observed(RateLimiter.builder());
    for (int i = 0; i <= RateLimitObservation.MAX_POLICY_VALUES; i++) {
      limiter.check(KEY, Policy.of(1, Duration.ofMinutes(1)).withName("p" + i));
    }
    limiter.check(KEY, Policy.of(1, Duration.ofMinutes(1)).withName("p0"));
    List<String> values = stopped.stream().map(c -> lowCardinality(c).get("ratelimit.policy")).toList();
    assertThat(values.subList(0, RateLimitObservation.MAX_POLICY_VALUES))
        .doesNotContain(RateLimitObservation.OTHER).contains("p0", "p999");
    assertThat(values.subList(RateLimitObservation.MAX_POLICY_VALUES, values.size()))
        .as("the name beyond the cap is other; a name seen before keeps its value")
        .containsExactly(RateLimitObservation.OTHER, "p0");
  }

  // ------------------------------------------------------------------------------ the starter

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
          RateLimitObservationAutoConfiguration.class, AopAutoConfiguration.class))
      .withPropertyValues("ratelimit.policies.api.limit=1", "ratelimit.policies.api.window=1m");

  @Configuration(proxyBeanMethods = false)
  static class WithRegistry {
    @Bean
    TestObservationRegistry observationRegistry() {
      return TestObservationRegistry.create();
    }

    @Bean
    Orders orders() {
      return new Orders();
    }
  }

  /** A rate-limited bean, keyed by a value that must never reach the observation. */
  public static class Orders {
    @RateLimited(key = "#user", policy = "api")
    public String place(String user) {
      return "placed";
    }
  }

  @Test
  void theStarterObservesItsLimiterWhenTheApplicationHasARegistry() {
    runner.withUserConfiguration(WithRegistry.class).run(context -> {
      TestObservationRegistry observations = context.getBean(TestObservationRegistry.class);
      Orders orders = context.getBean(Orders.class);
      assertThat(orders.place("secret-42")).isEqualTo("placed");
      assertThatThrownBy(() -> orders.place("secret-42")).isInstanceOf(RateLimitExceededException.class);
      TestObservationRegistryAssert.assertThat(observations)
          .hasNumberOfObservationsWithNameEqualTo(RateLimitObservation.NAME, 2)
          .forAllObservationsWithNameEqualTo(RateLimitObservation.NAME, o -> o
              .hasLowCardinalityKeyValue("ratelimit.policy", "api")
              .doesNotHaveHighCardinalityKeyValueWithKey("ratelimit.key"))
          .hasAnObservation(o -> o.hasLowCardinalityKeyValue("ratelimit.decision", "denied")
              .hasLowCardinalityKeyValue("ratelimit.outcome", "denied"));
      assertThat(context.getBean(RateLimiter.class).toString()).startsWith("observed ");
    });
  }

  @Test
  void onRedisTheOutcomeTellsTheNearCacheAndTheFailureMode() {
    try (RedisServer redis = RedisServer.start()) {
      runner.withUserConfiguration(WithRegistry.class).withPropertyValues("ratelimit.backend=redis",
          "ratelimit.redis.url=" + redis.url(), "ratelimit.timeout=1s", "ratelimit.redis.timeout=500ms")
          .run(context -> {
            RateLimiter limiter = context.getBean(RateLimiter.class);
            RedisWarmUp.warmUp(limiter);
            TestObservationRegistry observations = context.getBean(TestObservationRegistry.class);
            observations.clear();
            Policy api = context.getBean(PolicyRegistry.class).get("api", "test");
            limiter.check(KEY, api);
            limiter.check(KEY, api); // Redis denies; the near-cache keeps the denial
            limiter.check(KEY, api); // answered locally
            redis.close();
            assertThat(limiter.check("user:secret-43", api).isDegraded()).isTrue(); // FAIL_OPEN decides
            TestObservationRegistryAssert.assertThat(observations)
                .hasNumberOfObservationsWithNameEqualTo(RateLimitObservation.NAME, 4)
                .hasAnObservation(o -> o.hasLowCardinalityKeyValue("ratelimit.outcome", "allowed"))
                .hasAnObservation(o -> o.hasLowCardinalityKeyValue("ratelimit.outcome", "denied"))
                .hasAnObservation(o -> o.hasLowCardinalityKeyValue("ratelimit.outcome", "denied_by_near_cache")
                    .hasLowCardinalityKeyValue("ratelimit.decision", "denied"))
                .hasAnObservation(o -> o.hasLowCardinalityKeyValue("ratelimit.outcome", "failure_allowed")
                    .hasLowCardinalityKeyValue("ratelimit.decision", "allowed"));
          });
    }
  }

  @Test
  void withoutARegistryOrMicrometerNothingIsApplied() {
    runner.run(context -> {
      assertThat(context).doesNotHaveBean(LimiterDecorator.class);
      assertThat(context.getBean(RateLimiter.class).toString()).doesNotStartWith("observed ");
    });
    runner.withBean(ObservationRegistry.class, ObservationRegistry::create).run(context -> {
      RateLimiter limiter = context.getBean(RateLimiter.class);
      assertThat(limiter.toString()).as("a registry without handlers: nothing to observe, nothing applied")
          .doesNotStartWith("observed ");
      assertThat(limiter.tryAcquire(KEY, context.getBean(PolicyRegistry.class).get("api", "test"))).isTrue();
    });
    runner.withClassLoader(new FilteredClassLoader(ObservationRegistry.class))
        .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(LimiterDecorator.class));
  }
}

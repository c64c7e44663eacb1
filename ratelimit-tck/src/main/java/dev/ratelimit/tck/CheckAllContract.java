package dev.ratelimit.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.KeyedPolicy;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Part of {@link RateLimiterContract}: checkAll of one key's policies and across keys: all or nothing, one answer per policy. */
abstract class CheckAllContract extends KeysContract {
  // ---------------------------------------------------------------- checkAll

  @Test
  void checkAllIsAllOrNothingForEveryAlgorithmAsTheMemberThatHadRoom() {
    for (Algorithm algorithm : Algorithm.values()) {
      String k = key("all-" + algorithm);
      Policy roomy = policy(algorithm, 5, Duration.ofMinutes(1)).withName("roomy");
      Policy exhausted = policy(Algorithm.SLIDING_LOG, 2, Duration.ofMinutes(1)).withName("exhausted");
      assertThat(limiter.check(k, exhausted, 2).allowed()).isTrue();
      MultiDecision denied = limiter.checkAll(k, List.of(roomy, exhausted), 2);
      assertThat(denied.allowed()).isFalse();
      assertThat(limiter.inspect(k, roomy).remaining()).as("%s consumed nothing", algorithm).isEqualTo(5);
    }
  }

  @Test
  void checkAllIsAllOrNothingAcrossAlgorithms() {
    String k = key("all");
    Policy perSecond = policy(Algorithm.SLIDING_LOG, 3, Duration.ofSeconds(1)).withName("second");
    Policy perMinute = policy(Algorithm.FIXED_WINDOW, 5, Duration.ofMinutes(1)).withName("minute");
    Policy bucket = policy(Algorithm.GCRA, 10, Duration.ofMinutes(1)).withBurst(4).withName("bucket");
    List<Policy> all = List.of(perSecond, perMinute, bucket);

    MultiDecision first = limiter.checkAll(k, all, 3);
    assertThat(first.allowed()).isTrue();
    assertThat(first.decisions()).extracting(Decision::remaining).containsExactly(0L, 2L, 1L);
    assertThat(first.limiting().policy()).isEqualTo(perSecond);

    MultiDecision denied = limiter.checkAll(k, all, 1);
    assertThat(denied.allowed()).isFalse();
    assertThat(denied.decisions()).extracting(Decision::allowed).containsExactly(false, true, true);
    assertThat(denied.limiting().policy()).isEqualTo(perSecond);
    assertThat(limiter.inspect(k, perMinute).remaining()).as("nothing consumed").isEqualTo(2);
    assertThat(limiter.inspect(k, bucket).remaining()).as("nothing consumed").isEqualTo(1);

    advanceMicros(1_000_000);
    MultiDecision twoDeny = limiter.checkAll(k, all, 3);
    assertThat(twoDeny.allowed()).isFalse();
    assertThat(twoDeny.decisions()).extracting(Decision::allowed).containsExactly(true, false, false);
    Decision limiting = twoDeny.limiting();
    assertThat(limiting.policy()).as("the longest retryAfter").isEqualTo(perMinute);
    assertThat(limiting.retryAfter()).isEqualTo(Duration.ofSeconds(39));
    assertThat(limiter.inspect(k, perSecond).remaining()).as("nothing consumed").isEqualTo(3);

    MultiDecision ok = limiter.checkAll(k, all, 1);
    assertThat(ok.allowed()).isTrue();
    assertThat(ok.decisions()).extracting(Decision::remaining).containsExactly(2L, 1L, 0L);
    assertThat(ok.limiting().policy()).isEqualTo(bucket);
  }

  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void checkAllOfOnePolicyEqualsCheck(Algorithm algorithm) {
    Policy p = policy(algorithm, 4, Duration.ofSeconds(2));
    SplittableRandom random = new SplittableRandom(7);
    for (int i = 0; i < 60; i++) {
      long cost = 1 + random.nextInt(2);
      Decision single = limiter.check(key("single"), p, cost);
      MultiDecision multi = limiter.checkAll(key("multi"), List.of(p), cost);
      assertThat(multi.decisions()).containsExactly(single);
      assertThat(multi.allowed()).isEqualTo(single.allowed());
      advanceMicros(random.nextLong(400_000));
    }
  }

  @Test
  void checkAllRefusesDuplicatePolicies() {
    Policy p = Policy.of(3, Duration.ofSeconds(1));
    assertThatThrownBy(() -> limiter.checkAll(key("dup"), List.of(p, p), 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(p.name());
    assertThatThrownBy(() -> limiter.checkAll(key("dup"), List.of(), 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("policies");
  }

  // ---------------------------------------------------------------- checkAll across keys

  @Test
  void checkAllAcrossKeysConsumesEveryPairOrNone() {
    String a = key("a");
    String b = key("b");
    Policy perUser = policy(Algorithm.FIXED_WINDOW, 5, Duration.ofMinutes(1)).withName("user");
    Policy perTenant = policy(Algorithm.GCRA, 10, Duration.ofSeconds(10)).withName("tenant");
    Policy perRoute = policy(Algorithm.SLIDING_LOG, 3, Duration.ofSeconds(1)).withName("route");
    List<KeyedPolicy> checks = List.of(KeyedPolicy.of(a, perUser), KeyedPolicy.of(b, perTenant),
        KeyedPolicy.of(a, perRoute));

    MultiDecision first = limiter.checkAll(checks, 2);
    assertThat(first.allowed()).isTrue();
    assertThat(first.decisions()).extracting(Decision::policy).containsExactly(perUser, perTenant, perRoute);
    assertThat(first.decisions()).extracting(Decision::remaining).containsExactly(3L, 8L, 1L);
    assertThat(first.decisions()).extracting(Decision::retryAfterMicros).containsExactly(0L, 0L, 0L);
    assertThat(limiter.inspect(a, perUser).remaining()).isEqualTo(3);
    assertThat(limiter.inspect(b, perTenant).remaining()).isEqualTo(8);
    assertThat(limiter.inspect(a, perRoute).remaining()).isEqualTo(1);
    assertThat(limiter.inspect(b, perUser).remaining()).as("b was not checked against perUser").isEqualTo(5);

    MultiDecision denied = limiter.checkAll(checks, 2);
    assertThat(denied.allowed()).isFalse();
    assertThat(denied.decisions()).extracting(Decision::allowed).containsExactly(true, true, false);
    Decision route = denied.decisions().get(2);
    assertThat(route.remaining()).isEqualTo(1);
    assertThat(route.retryAfterMicros()).as("the first two units leave the 1 s log").isEqualTo(1_000_000);
    assertThat(denied.limiting()).isEqualTo(route);
    assertThat(limiter.inspect(a, perUser).remaining()).as("nothing consumed").isEqualTo(3);
    assertThat(limiter.inspect(b, perTenant).remaining()).as("nothing consumed").isEqualTo(8);
    assertThat(limiter.inspect(a, perRoute).remaining()).as("nothing consumed").isEqualTo(1);

    advanceMicros(route.retryAfterMicros() - 1);
    assertThat(limiter.checkAll(checks, 2).allowed()).as("1 µs early").isFalse();
    advanceMicros(1);
    MultiDecision again = limiter.checkAll(checks, 2);
    assertThat(again.allowed()).isTrue();
    assertThat(again.decisions()).extracting(Decision::remaining).containsExactly(1L, 7L, 1L);
  }

  /** A pair that denies, listed first, leaves every other key unconsumed, for every algorithm. */
  @Test
  void checkAllAcrossKeysDeniedByItsFirstPairConsumesNoOtherKey() {
    for (Algorithm algorithm : Algorithm.values()) {
      String full = key("full-" + algorithm);
      String other = key("other-" + algorithm);
      String third = key("third-" + algorithm);
      Policy roomy = policy(algorithm, 5, Duration.ofMinutes(1)).withName("roomy");
      Policy exhausted = policy(Algorithm.SLIDING_LOG, 2, Duration.ofMinutes(1)).withName("exhausted");
      assertThat(limiter.check(full, exhausted, 2).allowed()).isTrue();
      MultiDecision denied = limiter.checkAll(List.of(KeyedPolicy.of(full, exhausted), KeyedPolicy.of(other, roomy),
          KeyedPolicy.of(third, roomy), KeyedPolicy.of(full, roomy)), 2);
      assertThat(denied.allowed()).isFalse();
      assertThat(denied.decisions()).extracting(Decision::allowed).containsExactly(false, true, true, true);
      assertThat(denied.decisions().get(0).retryAfterMicros()).isEqualTo(60_000_000);
      assertThat(limiter.inspect(other, roomy).remaining()).as("%s consumed nothing", algorithm).isEqualTo(5);
      assertThat(limiter.inspect(third, roomy).remaining()).as("%s consumed nothing", algorithm).isEqualTo(5);
      assertThat(limiter.inspect(full, roomy).remaining()).as("%s consumed nothing", algorithm).isEqualTo(5);
    }
  }

  /** A pair that denies, listed last, undoes nothing: no pair before it consumed (see {@link #checkedTogether}). */
  @Test
  void checkAllAcrossKeysDeniedByItsLastPairConsumesNoOtherKey() {
    for (Algorithm algorithm : Algorithm.values()) {
      List<String> together = checkedTogether(List.of(key("full-" + algorithm), key("x-" + algorithm),
          key("y-" + algorithm), key("z-" + algorithm)));
      String full = together.get(0);
      Policy roomy = policy(algorithm, 5, Duration.ofMinutes(1)).withName("roomy");
      Policy exhausted = policy(Algorithm.SLIDING_LOG, 2, Duration.ofMinutes(1)).withName("exhausted");
      assertThat(limiter.check(full, exhausted, 2).allowed()).isTrue();
      List<String> others = together.subList(1, 4);
      List<KeyedPolicy> checks = new ArrayList<>();
      others.forEach(k -> checks.add(KeyedPolicy.of(k, roomy)));
      checks.add(KeyedPolicy.of(full, exhausted));
      MultiDecision denied = limiter.checkAll(checks, 2);
      assertThat(denied.allowed()).isFalse();
      assertThat(denied.decisions()).extracting(Decision::allowed).containsExactly(true, true, true, false);
      for (String k : others) {
        assertThat(limiter.inspect(k, roomy).remaining()).as("%s consumed nothing", algorithm).isEqualTo(5);
      }
    }
  }

  /**
   * Two keys with a policy each decide exactly as one key with both policies: the same states, all
   * or nothing, to the microsecond, denials' would-pass members included.
   */
  @ParameterizedTest
  @EnumSource(Algorithm.class)
  void checkAllAcrossKeysDecidesAsOneKeysCheckAllOfTheSamePolicies(Algorithm algorithm) {
    Policy p = policy(algorithm, 4, Duration.ofSeconds(2)).withName("p");
    Policy q = policy(Algorithm.GCRA, 3, Duration.ofSeconds(1)).withName("q");
    List<String> together = checkedTogether(List.of(key("x"), key("y")));
    List<KeyedPolicy> across = List.of(KeyedPolicy.of(together.get(0), p), KeyedPolicy.of(together.get(1), q));
    SplittableRandom random = new SplittableRandom(11);
    int denials = 0;
    for (int i = 0; i < 60; i++) {
      long cost = 1 + random.nextInt(3);
      MultiDecision one = limiter.checkAll(key("one"), List.of(p, q), cost);
      MultiDecision two = i % 2 == 0 ? limiter.checkAll(across, cost)
          : limiter.checkAllAsync(across, cost).toCompletableFuture().join();
      assertThat(two).as("check %s", i).isEqualTo(one);
      denials += one.allowed() ? 0 : 1;
      advanceMicros(random.nextLong(500_000));
    }
    assertThat(denials).as("the run must deny some").isPositive();
  }

  @Test
  void checkAllAcrossKeysOfOneKeyIsCheckAll() {
    Policy p = Policy.of(3, Duration.ofSeconds(1)).withName("p");
    Policy q = Policy.of(5, Duration.ofSeconds(1)).withName("q");
    for (int i = 0; i < 5; i++) {
      MultiDecision same = limiter.checkAll(List.of(KeyedPolicy.of(key("k"), p), KeyedPolicy.of(key("k"), q)), 1);
      assertThat(same).isEqualTo(limiter.checkAll(key("mirror"), List.of(p, q), 1));
    }
  }

  @Test
  void checkAllAcrossKeysRefusesBadInputAndConsumesNothing() {
    Policy p = Policy.of(3, Duration.ofSeconds(1));
    Policy small = Policy.of(1, Duration.ofSeconds(1)).withName("small");
    String a = key("a");
    assertThatThrownBy(() -> limiter.checkAll(List.of(KeyedPolicy.of(a, p), KeyedPolicy.of(key("b"), p),
        KeyedPolicy.of(a, p)), 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(p.name()).hasMessageContaining(a.substring(0, 20)).hasMessageContaining("twice");
    assertThatThrownBy(() -> limiter.checkAll(List.<KeyedPolicy>of(), 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("checks");
    assertThatThrownBy(() -> limiter.checkAllAsync(List.<KeyedPolicy>of(), 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("checks");
    assertThatThrownBy(() -> limiter.checkAll(List.of(KeyedPolicy.of(a, p), KeyedPolicy.of(key("b"), small)), 2))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("small");
    assertThatThrownBy(() -> limiter.checkAll(List.of(KeyedPolicy.of(a, p), KeyedPolicy.of(key("b"), p)), 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cost");
    assertThatThrownBy(() -> KeyedPolicy.of("", p)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("key");
    assertThatThrownBy(() -> KeyedPolicy.of(a, null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("policy");
    assertThat(limiter.inspect(a, p).remaining()).as("nothing consumed").isEqualTo(3);
  }

  /**
   * Shadow policies never deny across keys either: when only a shadow pair denies, the enforced
   * pairs are checked again alone and consume once.
   */
  @Test
  void checkAllAcrossKeysLetsAShadowPairsDenialThrough() {
    Policy enforced = Policy.of(5, Duration.ofMinutes(1)).withName("enforced");
    Policy dark = Policy.of(1, Duration.ofMinutes(1)).withName("dark");
    String a = key("a");
    String b = key("b");
    List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
    try (RateLimiter shadowing = RateLimiter.builder().clock(clock).backend(newBackend())
        .timeout(Duration.ofSeconds(30)).circuitBreaker(0, Duration.ofSeconds(1))
        .shadowPolicies(java.util.Set.of("dark"))
        .listener(new RateLimitListener() {
          @Override
          public void onBackendError(Throwable error) {
            errors.add(error);
          }
        }).build()) {
      // the shadow pair first: in a backend that is all or nothing per group of keys, its group goes first
      List<KeyedPolicy> checks = List.of(KeyedPolicy.of(b, dark), KeyedPolicy.of(a, enforced));
      assertThat(shadowing.checkAll(checks, 1).allowed()).isTrue();
      MultiDecision second = shadowing.checkAll(checks, 1);
      assertThat(second.allowed()).as("only the shadow pair denied").isTrue();
      assertThat(second.decisions().get(0).remaining()).isZero();
      assertThat(second.decisions().get(0).retryAfterMicros()).isZero();
      assertThat(second.decisions().get(1).remaining()).isEqualTo(3);
      assertThat(shadowing.checkAllAsync(checks, 1).toCompletableFuture().join().allowed()).isTrue();
      assertThat(shadowing.inspect(a, enforced).remaining()).as("consumed once per check").isEqualTo(2);
      assertThat(shadowing.inspect(b, dark).remaining()).isZero();
    }
    assertThat(errors).isEmpty();
  }
}

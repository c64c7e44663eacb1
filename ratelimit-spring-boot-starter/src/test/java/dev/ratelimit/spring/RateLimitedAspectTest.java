package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.ManualClock;
import dev.ratelimit.annotation.RateLimitExceededException;
import dev.ratelimit.annotation.RateLimited;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cache.CacheManager;
import org.springframework.cache.annotation.Cacheable;
import org.springframework.cache.annotation.EnableCaching;
import org.springframework.cache.concurrent.ConcurrentMapCacheManager;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code @RateLimited} on plain beans: keys, costs, repetition, class level, ordering (what the
 * sandbox refuses fails start-up: {@link RefusedExpressionsFailStartUpTest}).
 */
class RateLimitedAspectTest {
  private static final ManualClock CLOCK = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, AopAutoConfiguration.class))
      .withUserConfiguration(Beans.class)
      .withPropertyValues("ratelimit.policies.api.limit=3", "ratelimit.policies.api.window=1m");

  @Configuration(proxyBeanMethods = false)
  @EnableCaching
  static class Beans {
    @Bean
    InstantSource clock() {
      return CLOCK;
    }

    @Bean
    Orders orders() {
      return new Orders();
    }

    @Bean
    Keys keys() {
      return new Keys();
    }

    @Bean
    ClassLevel classLevel() {
      return new ClassLevel();
    }

    @Bean
    CacheManager cacheManager() {
      return new ConcurrentMapCacheManager("quotes");
    }

    @Bean
    Api api() {
      return new ApiImpl();
    }

    @Bean
    Overriding overriding() {
      return new Overriding();
    }
  }

  /** Annotated on the interface only, as a generated API interface is. */
  public interface Api {
    @RateLimited(key = "#user", limit = 1, window = "1m", name = "on-interface")
    String get(String user);
  }

  public static class ApiImpl implements Api {
    @Override
    public String get(String user) {
      return "ok";
    }
  }

  /** Annotated on the superclass's method only. */
  public static class Base {
    @RateLimited(key = "#user", limit = 1, window = "1m", name = "on-superclass")
    public String get(String user) {
      return "base";
    }
  }

  public static class Overriding extends Base {
    @Override
    public String get(String user) {
      return "overridden";
    }
  }

  /** A bean that key expressions call as {@code @keys}. */
  public static class Keys {
    public String tenantOf(String user) {
      return user.substring(0, user.indexOf('/'));
    }
  }

  public static class Orders {
    private final AtomicInteger calls = new AtomicInteger();

    /** How many limited calls ran (a method: the proxy's own fields are not the target's). */
    public int calls() {
      return calls.get();
    }

    @RateLimited(key = "#userId", limit = 2, window = "1m")
    public String place(String userId) {
      calls.incrementAndGet();
      return "ok " + userId;
    }

    @RateLimited(key = "#p0 + ':' + #a1", limit = 1, window = "1m")
    public String byIndex(String user, int item) {
      return "ok";
    }

    @RateLimited(key = "@keys.tenantOf(#user)", policy = "api")
    public String perTenant(String user) {
      return "ok";
    }

    @RateLimited(key = "#user", limit = 5, window = "1m", cost = "#items.length")
    public int bulk(String user, String[] items) {
      return items.length;
    }

    @RateLimited(key = "#user", limit = 5, window = "1m", name = "per-minute")
    @RateLimited(key = "#user", limit = 2, window = "10s", name = "per-10s")
    public String twoPolicies(String user) {
      return "ok";
    }

    @RateLimited(key = "#user", limit = 1, window = "1m", name = "nullable")
    public String nullable(String user) {
      return "ok";
    }

    /** A key of any type: an object without a text of its own prints its identity. */
    @RateLimited(key = "#user", limit = 1, window = "1m", name = "objects")
    public String byObject(Object user) {
      return "ok";
    }

    @RateLimited(key = "#day", limit = 1, window = "1m", name = "days")
    public String byDay(java.time.DayOfWeek day) {
      return "ok";
    }

    @RateLimited(key = "#id", limit = 1, window = "1m", name = "ids")
    public String byId(java.util.UUID id) {
      return "ok";
    }

    @RateLimited(key = "#user", limit = 5, window = "1m", name = "weighted", cost = "#weight")
    public String weighted(String user, double weight) {
      return "ok";
    }

    @RateLimited(key = "#user.name", limit = 5, window = "1m", name = "failing")
    public String failing(Account user) {
      return "ok";
    }

    @RateLimited(key = "#symbol", limit = 1, window = "1m", name = "quotes")
    @Cacheable("quotes")
    public String quote(String symbol) {
      calls.incrementAndGet();
      return "quote " + symbol;
    }

    @RateLimited(key = "#user", policy = "api")
    public String sameKeyAsPerTenant(String user) {
      return "ok";
    }

    @RateLimited(key = "#user", limit = 3, window = "1m", name = "other-api")
    public String otherPolicySameKey(String user) {
      return "ok";
    }
  }

  /** A data object of the application's. */
  public record Account(String name) {}

  @RateLimited(key = "'class'", limit = 2, window = "1m", name = "class-level")
  public static class ClassLevel {
    public String a() {
      return "a";
    }

    public String b() {
      return "b";
    }

    @RateLimited(key = "'own'", limit = 5, window = "1m", name = "method-level")
    public String own() {
      return "own";
    }

    /** What Spring MVC calls around a controller's handlers: counting it would count a request twice. */
    @org.springframework.web.bind.annotation.ModelAttribute("user")
    public String modelAttribute() {
      return "user";
    }

    @Override
    public String toString() {
      return "class-level bean";
    }
  }

  @Test
  void limitsByANamedArgumentAndThrowsWithTheDecision() {
    runner.run(context -> {
      Orders orders = context.getBean(Orders.class);
      assertThat(orders.place("alice")).isEqualTo("ok alice");
      assertThat(orders.place("alice")).isEqualTo("ok alice");
      assertThatThrownBy(() -> orders.place("alice"))
          .isInstanceOfSatisfying(RateLimitExceededException.class, e -> {
            assertThat(e.decision().allowed()).isFalse();
            assertThat(e.decision().policy().name()).isEqualTo("Orders.place");
            assertThat(e.decision().retryAfter()).isPositive();
          });
      assertThat(orders.calls()).isEqualTo(2);
      assertThat(orders.place("bob")).as("another key").isEqualTo("ok bob");
    });
  }

  @Test
  void argumentsByIndexAndBeanReferences() {
    runner.run(context -> {
      Orders orders = context.getBean(Orders.class);
      orders.byIndex("u", 1);
      assertThatThrownBy(() -> orders.byIndex("u", 1)).isInstanceOf(RateLimitExceededException.class);
      assertThat(orders.byIndex("u", 2)).as("#a1 is part of the key").isEqualTo("ok");
      for (int i = 0; i < 3; i++) {
        orders.perTenant("acme/user" + i);
      }
      assertThatThrownBy(() -> orders.perTenant("acme/another")).isInstanceOf(RateLimitExceededException.class);
      assertThat(orders.perTenant("globex/user")).isEqualTo("ok");
    });
  }

  @Test
  void costIsAnExpression() {
    runner.run(context -> {
      Orders orders = context.getBean(Orders.class);
      assertThat(orders.bulk("u", new String[] {"a", "b", "c"})).isEqualTo(3);
      assertThatThrownBy(() -> orders.bulk("u", new String[] {"a", "b", "c"}))
          .isInstanceOf(RateLimitExceededException.class);
      assertThat(orders.bulk("u", new String[] {"a", "b"})).isEqualTo(2);
    });
  }

  @Test
  void repeatedAnnotationsAreCheckedTogether() {
    runner.run(context -> {
      Orders orders = context.getBean(Orders.class);
      orders.twoPolicies("u");
      orders.twoPolicies("u");
      assertThatThrownBy(() -> orders.twoPolicies("u")).isInstanceOfSatisfying(RateLimitExceededException.class,
          e -> {
            assertThat(e.decision().policy().name()).isEqualTo("per-10s");
            assertThat(e.decisions().decisions()).hasSize(2);
          });
      CLOCK.advance(Duration.ofSeconds(10));
      orders.twoPolicies("u");
      orders.twoPolicies("u");
      assertThat(context.getBean(dev.ratelimit.RateLimiter.class)
          .inspect("u", dev.ratelimit.Policy.of(5, Duration.ofMinutes(1)).withName("per-minute").withAlgorithm(
              dev.ratelimit.Algorithm.GCRA)).remaining())
          .as("the denied call consumed nothing of the other policy").isEqualTo(1);
    });
  }

  @Test
  void classLevelAnnotationsCoverPublicMethodsAndMethodsWin() {
    runner.run(context -> {
      ClassLevel bean = context.getBean(ClassLevel.class);
      bean.a();
      bean.b();
      assertThatThrownBy(bean::a).isInstanceOf(RateLimitExceededException.class);
      for (int i = 0; i < 5; i++) {
        assertThat(bean.own()).isEqualTo("own");
      }
      assertThatThrownBy(bean::own).isInstanceOfSatisfying(RateLimitExceededException.class,
          e -> assertThat(e.decision().policy().name()).isEqualTo("method-level"));
      for (int i = 0; i < 3; i++) { // the class's limit (2) is spent: neither of these is under it
        assertThat(bean.toString()).isEqualTo("class-level bean");
        assertThat(bean.modelAttribute()).isEqualTo("user");
      }
    });
  }

  @Test
  void anAnnotationOnAnInterfaceOrAnOverriddenMethodApplies() {
    runner.run(context -> {
      Api api = context.getBean(Api.class);
      assertThat(api.get("u")).isEqualTo("ok");
      assertThatThrownBy(() -> api.get("u")).as("the interface's limit, on the implementation")
          .isInstanceOf(RateLimitExceededException.class);
      Overriding overriding = context.getBean(Overriding.class);
      assertThat(overriding.get("u")).isEqualTo("overridden");
      assertThatThrownBy(() -> overriding.get("u")).as("the superclass's limit, on the override")
          .isInstanceOf(RateLimitExceededException.class);
    });
  }

  @Test
  void aMissingKeySharesOneBucketByDefault() {
    runner.run(context -> {
      Orders orders = context.getBean(Orders.class);
      assertThat(orders.nullable(null)).isEqualTo("ok");
      assertThatThrownBy(() -> orders.nullable(null)).as("a second keyless call shares the bucket")
          .isInstanceOf(RateLimitExceededException.class);
      assertThatThrownBy(() -> orders.nullable(" ")).isInstanceOf(RateLimitExceededException.class);
      assertThat(orders.nullable("real")).isEqualTo("ok");
    });
  }

  @Test
  void aValueThatIsNoKeyIsAMissingKeyNotABucketPerCall() {
    runner.run(context -> {
      Orders orders = context.getBean(Orders.class);
      assertThat(orders.byObject(new Object())).isEqualTo("ok");
      assertThatThrownBy(() -> orders.byObject(new Object())).as("the shared missing-key bucket, not a new one")
          .isInstanceOf(RateLimitExceededException.class);
      assertThatThrownBy(() -> orders.byObject(new String[] {"u"})).isInstanceOf(RateLimitExceededException.class);
      assertThatThrownBy(() -> orders.byObject(new Account("ann"))).as("a record's text is not used either")
          .isInstanceOf(RateLimitExceededException.class);
      assertThat(orders.byObject(java.util.List.of("u"))).as("a list of keys is a key").isEqualTo("ok");
      assertThat(orders.byObject(java.util.List.of("v"))).isEqualTo("ok");
    });
  }

  @Test
  void enumsAndUuidsAreKeysByTheirNamesAsInFilterRules() {
    runner.run(context -> {
      Orders orders = context.getBean(Orders.class);
      dev.ratelimit.RateLimiter limiter = context.getBean(dev.ratelimit.RateLimiter.class);
      assertThat(orders.byDay(java.time.DayOfWeek.MONDAY)).isEqualTo("ok");
      assertThatThrownBy(() -> orders.byDay(java.time.DayOfWeek.MONDAY)).isInstanceOf(RateLimitExceededException.class);
      assertThat(orders.byDay(java.time.DayOfWeek.TUESDAY)).isEqualTo("ok");
      dev.ratelimit.Policy days = dev.ratelimit.Policy.of(1, Duration.ofMinutes(1)).withName("days");
      assertThat(limiter.inspect("MONDAY", days).remaining()).isZero();
      java.util.UUID id = java.util.UUID.fromString("0F8FAD5B-D9CB-469F-A165-70867728950E");
      assertThat(orders.byId(id)).isEqualTo("ok");
      assertThat(limiter.inspect("0f8fad5b-d9cb-469f-a165-70867728950e",
          dev.ratelimit.Policy.of(1, Duration.ofMinutes(1)).withName("ids")).remaining()).isZero();
    });
  }

  @Test
  void aCostIsRoundedUpAndOneNoCallCanBeChargedThrowsNamingTheMethod() {
    runner.run(context -> {
      Orders orders = context.getBean(Orders.class);
      assertThat(orders.weighted("u", 2.5)).as("charged 3").isEqualTo("ok");
      assertThat(orders.weighted("u", 2)).isEqualTo("ok");
      assertThatThrownBy(() -> orders.weighted("u", 1)).as("3 + 2 of 5 used").isInstanceOf(RateLimitExceededException.class);
      assertThatThrownBy(() -> orders.weighted("v", 6)).isInstanceOf(IllegalStateException.class)
          .hasMessage("@RateLimited on " + Orders.class.getName() + ".weighted: cost expression '#weight' gave 6.0,"
              + " above 5, the most one call can be charged; a cost must be a number from 1 to 5");
      assertThatThrownBy(() -> orders.weighted("v", 0)).hasMessageContaining("gave 0.0, below 1");
    });
  }

  @Test
  void aKeyExpressionThatFailsThrowsNamingTheMethod() {
    runner.run(context -> {
      Orders orders = context.getBean(Orders.class);
      assertThat(orders.failing(new Account("ann"))).isEqualTo("ok");
      assertThatThrownBy(() -> orders.failing(null)).isInstanceOf(IllegalStateException.class)
          .hasMessageStartingWith("@RateLimited on " + Orders.class.getName() + ".failing: key expression"
              + " '#user.name' failed: ");
    });
  }

  @Test
  void aMissingKeyCanBeRejected() {
    runner.withPropertyValues("ratelimit.missing-key=reject").run(context -> {
      Orders orders = context.getBean(Orders.class);
      assertThatThrownBy(() -> orders.nullable(null)).isInstanceOf(MissingRateLimitKeyException.class)
          .hasMessageContaining("#user");
    });
  }

  @Test
  void policiesWithTheSameKeyNeverShareCounters() {
    runner.run(context -> {
      Orders orders = context.getBean(Orders.class);
      for (int i = 0; i < 3; i++) {
        orders.sameKeyAsPerTenant("k");
      }
      assertThat(orders.otherPolicySameKey("k")).isEqualTo("ok");
    });
  }

  /** The limit is checked before the cache answers: a cached call still counts. */
  @Test
  void runsBeforeCaching() {
    runner.run(context -> {
      Orders orders = context.getBean(Orders.class);
      assertThat(orders.quote("ACME")).isEqualTo("quote ACME");
      assertThatThrownBy(() -> orders.quote("ACME")).isInstanceOf(RateLimitExceededException.class);
      assertThat(orders.calls()).isEqualTo(1);
    });
  }

  @Test
  void theOrderIsConfigurable() {
    runner.withPropertyValues("ratelimit.aspect.order=" + Integer.MAX_VALUE).run(context -> {
      Orders orders = context.getBean(Orders.class);
      assertThat(orders.quote("ACME")).isEqualTo("quote ACME");
      assertThat(orders.quote("ACME")).as("now the cache answers first").isEqualTo("quote ACME");
    });
  }
}

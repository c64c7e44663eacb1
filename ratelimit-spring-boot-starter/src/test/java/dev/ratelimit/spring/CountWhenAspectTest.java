package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.Algorithm;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.annotation.RateLimitExceededException;
import dev.ratelimit.annotation.RateLimited;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code @RateLimited(countWhen = ...)}: reserved before the call (refused while there is no room),
 * committed after it when the condition holds and given back otherwise, calls in flight at once
 * never beyond the limit, and what start-up refuses (over HTTP: {@link CountWhenStarterTest}).
 */
class CountWhenAspectTest {
  private static final ManualClock CLOCK = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
  private static final Policy FAILURES = Policy.of(3, Duration.ofMinutes(15)).withName("failures");
  private static final Policy CALLS = Policy.of(100, Duration.ofMinutes(15)).withName("calls");

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, AopAutoConfiguration.class))
      .withPropertyValues("ratelimit.backend=memory");

  @Configuration(proxyBeanMethods = false)
  static class Beans {
    @Bean
    InstantSource clock() {
      return CLOCK;
    }

    @Bean
    Logins logins() {
      return new Logins();
    }
  }

  /** Static: the bean is a proxy, whose own fields are not the target's. */
  static final AtomicInteger RAN = new AtomicInteger();
  static final AtomicInteger ENTERED = new AtomicInteger();
  /** Holds the calls of {@link Logins#held} until counted down. */
  static volatile CountDownLatch release = new CountDownLatch(0);

  public static class Logins {
    /** A failed login returns false; only those count, three per 15 minutes. */
    @RateLimited(key = "#user", limit = 3, window = "15m", name = "failures", countWhen = "#result == false")
    @RateLimited(key = "#user", limit = 100, window = "15m", name = "calls")
    public boolean login(String user, String password) {
      RAN.incrementAndGet();
      return "right".equals(password);
    }

    /** A failed login throws. */
    @RateLimited(key = "#user", limit = 2, window = "15m", name = "thrown", countWhen = "#exception != null")
    public String strict(String user, String password) {
      if (!"right".equals(password)) {
        throw new IllegalArgumentException("bad credentials");
      }
      return "welcome";
    }

    /** Held until {@link #release}; fails when told to. */
    // a fixed window gives back exactly, calls overlapping or not; GCRA may give back less when
    // other calls reserved meanwhile (never more: docs/reservations.md)
    @RateLimited(key = "#user", limit = 100, window = "15m", algorithm = Algorithm.FIXED_WINDOW, name = "held",
        countWhen = "#result == false")
    public boolean held(String user, boolean succeed) throws InterruptedException {
      ENTERED.incrementAndGet();
      release.await(30, TimeUnit.SECONDS);
      return succeed;
    }

    /** A condition that gives no boolean: a text. */
    @RateLimited(key = "'k'", limit = 5, window = "15m", name = "undecided", countWhen = "#result")
    public String undecided() {
      return "yes";
    }
  }

  private static long room(RateLimiter limiter, String key, Policy policy) {
    return limiter.inspect(key, policy).remaining();
  }

  @Test
  void onlyFailedCallsCountAndNoneRunsWithoutRoom() {
    runner.withUserConfiguration(Beans.class).run(context -> {
      Logins logins = context.getBean(Logins.class);
      RateLimiter limiter = context.getBean(RateLimiter.class);
      for (int i = 0; i < 10; i++) {
        assertThat(logins.login("ann", "right")).isTrue();
      }
      assertThat(room(limiter, "ann", FAILURES)).as("successes not counted").isEqualTo(3);
      assertThat(room(limiter, "ann", CALLS)).as("the other annotation counts every call").isEqualTo(90);
      for (int i = 0; i < 3; i++) {
        assertThat(logins.login("ann", "wrong")).isFalse();
      }
      assertThat(room(limiter, "ann", FAILURES)).isZero();
      int ran = RAN.get();
      assertThatThrownBy(() -> logins.login("ann", "right")).isInstanceOf(RateLimitExceededException.class)
          .hasMessageStartingWith("rate limit of policy 'failures' exceeded; retry after PT5M");
      assertThat(RAN).as("refused before it ran").hasValue(ran);
      assertThat(room(limiter, "ann", CALLS)).as("a call refused is charged nowhere").isEqualTo(87);
      assertThat(logins.login("bob", "right")).as("another key").isTrue();
    });
  }

  @Test
  void aThrownExceptionIsSeenAndRethrown() {
    runner.withUserConfiguration(Beans.class).run(context -> {
      Logins logins = context.getBean(Logins.class);
      RateLimiter limiter = context.getBean(RateLimiter.class);
      Policy thrown = Policy.of(2, Duration.ofMinutes(15)).withName("thrown");
      assertThat(logins.strict("cy", "right")).isEqualTo("welcome");
      assertThatThrownBy(() -> logins.strict("cy", "wrong")).isInstanceOf(IllegalArgumentException.class)
          .hasMessage("bad credentials");
      assertThat(room(limiter, "cy", thrown)).isEqualTo(1);
      assertThatThrownBy(() -> logins.strict("cy", "wrong")).isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> logins.strict("cy", "right")).isInstanceOf(RateLimitExceededException.class);
    });
  }

  @Test
  void aConditionThatGivesNoBooleanCountsTheCallThenThrows() {
    runner.withUserConfiguration(Beans.class).run(context -> {
      Logins logins = context.getBean(Logins.class);
      assertThatThrownBy(logins::undecided).isInstanceOf(IllegalStateException.class)
          .hasMessage("@RateLimited on " + Logins.class.getName() + ".undecided: countWhen expression '#result' gave a"
              + " java.lang.String, not true or false");
      assertThat(room(context.getBean(RateLimiter.class), "k", Policy.of(5, Duration.ofMinutes(15))
          .withName("undecided"))).as("counted: it ran").isEqualTo(4);
    });
  }

  /**
   * N calls in flight at once on one key, with room for 1: the method holds every admitted call
   * until all N have either entered or been refused. The first reserves the unit, so every other
   * finds no room and is refused: exactly one runs, and the counted state is the limit, no more.
   */
  @Test
  void callsInFlightAtOnceNeverPassBeyondTheLimit() throws Exception {
    int n = 16;
    Policy held = Policy.of(100, Duration.ofMinutes(15), Algorithm.FIXED_WINDOW).withName("held");
    runner.withUserConfiguration(Beans.class).run(context -> {
      Logins logins = context.getBean(Logins.class);
      RateLimiter limiter = context.getBean(RateLimiter.class);
      limiter.checkAll("racing", List.of(held), 99); // room for 1
      Race race = race(logins, "racing", n, i -> false);
      assertThat(race.admitted).as("admitted (room 1)").isEqualTo(1);
      assertThat(race.refused).isEqualTo(n - 1);
      assertThat(room(limiter, "racing", held)).as("counted: the limit, no more").isZero();
      assertThatThrownBy(() -> logins.held("racing", true)).isInstanceOf(RateLimitExceededException.class);
    });
  }

  /** Racing calls that succeed, with room for 1: one holds the unit, the others are refused; its success gives it back. */
  @Test
  void racingSuccessesGiveTheirUnitBack() throws Exception {
    int n = 16;
    Policy held = Policy.of(100, Duration.ofMinutes(15), Algorithm.FIXED_WINDOW).withName("held");
    runner.withUserConfiguration(Beans.class).run(context -> {
      Logins logins = context.getBean(Logins.class);
      RateLimiter limiter = context.getBean(RateLimiter.class);
      limiter.checkAll("lucky", List.of(held), 99); // room for 1
      Race race = race(logins, "lucky", n, i -> true);
      assertThat(race.admitted).as("the unit's holder; the others found it held").isEqualTo(1);
      assertThat(race.refused).isEqualTo(n - 1);
      assertThat(room(limiter, "lucky", held)).as("successes are not counted").isEqualTo(1);
    });
  }

  /** With room for all, N racing calls count exactly those whose condition holds. */
  @Test
  void racingCallsCountExactlyWhatTheConditionSays() throws Exception {
    int n = 16;
    runner.withUserConfiguration(Beans.class).run(context -> {
      Logins logins = context.getBean(Logins.class);
      RateLimiter limiter = context.getBean(RateLimiter.class);
      Race race = race(logins, "mixed", n, i -> i % 4 == 0); // a quarter succeed
      assertThat(race.admitted).isEqualTo(n);
      assertThat(100 - room(limiter, "mixed", Policy.of(100, Duration.ofMinutes(15), Algorithm.FIXED_WINDOW).withName("held")))
          .as("the failures, no more").isEqualTo(n - n / 4);
    });
  }

  private record Race(int admitted, int refused) {}

  /** Starts n calls of {@link Logins#held} together; releases them once each has entered or been refused. */
  private static Race race(Logins logins, String user, int n, java.util.function.IntPredicate succeeds)
      throws Exception {
    ENTERED.set(0);
    release = new CountDownLatch(1);
    CountDownLatch start = new CountDownLatch(1);
    AtomicInteger refused = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      List<Future<Boolean>> calls = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        boolean succeed = succeeds.test(i);
        calls.add(pool.submit(() -> {
          start.await();
          try {
            logins.held(user, succeed);
            return true;
          } catch (RateLimitExceededException e) {
            refused.incrementAndGet();
            return false;
          }
        }));
      }
      start.countDown();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      while (ENTERED.get() + refused.get() < n && System.nanoTime() < deadline) {
        Thread.sleep(1);
      }
      release.countDown();
      int admitted = 0;
      for (Future<Boolean> call : calls) {
        admitted += call.get(30, TimeUnit.SECONDS) ? 1 : 0;
      }
      return new Race(admitted, refused.get());
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void startUpRefusesWhatEveryCallWouldGetWrong() {
    assertThat(startUpFailure(VoidResult.class)).contains("@RateLimited on " + VoidResult.class.getName()
        + ".run: countWhen expression '#result == null' reads #result, an unknown variable; the variables are"
        + " #exception (what the call threw)");
    assertThat(startUpFailure(UnknownVariable.class)).contains("countWhen expression '#response.status == 401'"
        + " reads #response, an unknown variable; the variables are #user (the parameters), #result, #exception (what"
        + " the call returned or threw)");
    assertThat(startUpFailure(NoBoolean.class)).contains("countWhen expression ''yes'' gives yes, not true or false");
    assertThat(startUpFailure(Leaky.class)).contains("countWhen settles a call after it ran, where the delay of"
        + " policy 'leaky' (LEAKY_BUCKET) cannot shape it; use GCRA");
    assertThat(startUpFailure(Sandboxed.class)).contains("type references T(...) are not allowed");
  }

  /** countWhen reserves: a limiter on a backend without reservations fails start-up, naming the method. */
  @Test
  void aLimiterWithoutReservationsFailsStartUp() {
    dev.ratelimit.spi.Backend plain = new dev.ratelimit.spi.Backend() {
      @Override
      public <R> R execute(dev.ratelimit.spi.Command<R> command) {
        throw new UnsupportedOperationException();
      }

      @Override
      public void close() {}
    };
    runner.withBean(RateLimiter.class, () -> RateLimiter.builder().backend(plain).build())
        .withUserConfiguration(Beans.class).run(context -> {
          assertThat(context).hasFailed();
          StringBuilder all = new StringBuilder();
          for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
            all.append(t.getMessage()).append('\n');
          }
          assertThat(all.toString()).contains("@RateLimited on " + Logins.class.getName())
              .contains("countWhen reserves the call's cost before it runs and settles it after, but the RateLimiter"
                  + " bean does not take reservations");
        });
  }

  /**
   * {@code #result} holds what the method returned, of its declared return type: when that is a
   * final class (a record, a text, a boxed boolean, an enum), a step its values cannot take fails
   * start-up, naming the method, the expression and the step. These passed start-up, then counted
   * every call and made it throw.
   */
  @Test
  void aStepTheResultOfAFinalReturnTypeCannotTakeFailsStartUp() {
    assertThat(startUpFailure(RecordResult.class)).contains("@RateLimited on " + RecordResult.class.getName()
        + ".run: countWhen expression '!#result.sucess' reads 'sucess' of #result, which has no such property;"
        + " #result is a " + Outcome.class.getName());
    assertThat(startUpFailure(TextResult.class)).contains("@RateLimited on " + TextResult.class.getName()
        + ".run: countWhen expression '#result.isEmty()' calls isEmty() on #result, a java.lang.String, which has no"
        + " such method");
    assertThat(startUpFailure(BooleanResult.class)).contains("countWhen expression '#result.nope()' calls nope() on"
        + " #result, a java.lang.Boolean, which has no such method");
    assertThat(startUpFailure(EnumResult.class)).contains("countWhen expression '#result.declaringClass != null' is"
        + " refused: a java.lang.Class (declaringClass of #result");
  }

  /** What a final result has passes start-up and counts; another return type is checked when called. */
  @Test
  void theStepsAResultHasCountAndAnotherReturnTypeIsCheckedWhenCalled() {
    runner.withUserConfiguration(Beans.class).withBean(Results.class).run(context -> {
      assertThat(context).hasNotFailed();
      Results results = context.getBean(Results.class);
      RateLimiter limiter = context.getBean(RateLimiter.class);
      results.outcome(true);
      results.outcome(false);
      assertThat(room(limiter, "outcomes", Policy.of(5, Duration.ofMinutes(1)).withName("outcomes")))
          .as("the failure counted").isEqualTo(4);
      assertThatThrownBy(results::open).isInstanceOf(IllegalStateException.class)
          .hasMessageStartingWith("@RateLimited on " + Results.class.getName() + ".open: countWhen")
          .hasMessageContaining("expression '#result.isEmty()' failed: ");
    });
  }

  /** A method's outcome, as a record. */
  public record Outcome(boolean success) {}

  public static class RecordResult {
    @RateLimited(limit = 1, window = "1m", countWhen = "!#result.sucess")
    public Outcome run() {
      return new Outcome(true);
    }
  }

  public static class TextResult {
    @RateLimited(limit = 1, window = "1m", countWhen = "#result.isEmty()")
    public String run() {
      return "x";
    }
  }

  public static class BooleanResult {
    @RateLimited(limit = 1, window = "1m", countWhen = "#result.nope()")
    public boolean run() {
      return true;
    }
  }

  public static class EnumResult {
    @RateLimited(limit = 1, window = "1m", countWhen = "#result.declaringClass != null")
    public Algorithm run() {
      return Algorithm.GCRA;
    }
  }

  public static class Results {
    @RateLimited(key = "'outcomes'", limit = 5, window = "1m", name = "outcomes", countWhen = "!#result.success")
    public Outcome outcome(boolean success) {
      return new Outcome(success);
    }

    /** Its declared type is not final: checked when called. */
    @RateLimited(limit = 5, window = "1m", countWhen = "#result.isEmty()")
    public CharSequence open() {
      return "x";
    }
  }

  /** A configured policy cannot become a leaky bucket under a countWhen, at start-up or by an update. */
  @Test
  void aConfiguredPolicyIsRefusedALeakyBucket() {
    runner.withBean(Configured.class).withPropertyValues("ratelimit.policies.logins.limit=5",
        "ratelimit.policies.logins.window=15m").run(context -> {
          PolicyRegistry policies = context.getBean(PolicyRegistry.class);
          assertThatThrownBy(() -> policies.update("logins", Policy.of(5, Duration.ofMinutes(15),
              Algorithm.LEAKY_BUCKET).withName("logins")))
              .isInstanceOf(IllegalArgumentException.class)
              .hasMessageContaining("policy 'logins' cannot become a LEAKY_BUCKET: " + Configured.class.getName()
                  + ".run charges it after its calls (countWhen)");
          assertThat(policies.find("logins").orElseThrow().algorithm()).isEqualTo(Algorithm.GCRA);
        });
    runner.withBean(Configured.class).withPropertyValues("ratelimit.policies.logins.limit=5",
        "ratelimit.policies.logins.window=15m", "ratelimit.policies.logins.algorithm=LEAKY_BUCKET")
        .run(context -> assertThat(context).hasFailed());
  }

  public static class Configured {
    @RateLimited(policy = "logins", countWhen = "#result == false")
    public boolean run() {
      return false;
    }
  }

  private String startUpFailure(Class<?> bean) {
    String[] failure = new String[1];
    runner.withBean(bean).run(context -> {
      assertThat(context).hasFailed();
      failure[0] = String.valueOf(context.getStartupFailure());
      Throwable t = context.getStartupFailure();
      StringBuilder all = new StringBuilder();
      for (; t != null; t = t.getCause()) {
        all.append(t.getMessage()).append('\n');
      }
      failure[0] = all.toString();
    });
    return failure[0];
  }

  public static class VoidResult {
    @RateLimited(limit = 1, window = "1m", countWhen = "#result == null")
    public void run() {}
  }

  public static class UnknownVariable {
    @RateLimited(key = "#user", limit = 1, window = "1m", countWhen = "#response.status == 401")
    public String run(String user) {
      return user;
    }
  }

  public static class NoBoolean {
    @RateLimited(limit = 1, window = "1m", countWhen = "'yes'")
    public String run() {
      return "x";
    }
  }

  public static class Leaky {
    @RateLimited(limit = 1, window = "1m", algorithm = Algorithm.LEAKY_BUCKET, name = "leaky", countWhen = "true")
    public String run() {
      return "x";
    }
  }

  public static class Sandboxed {
    @RateLimited(limit = 1, window = "1m", countWhen = "T(java.lang.System).exit(0) == null")
    public String run() {
      return "x";
    }
  }
}

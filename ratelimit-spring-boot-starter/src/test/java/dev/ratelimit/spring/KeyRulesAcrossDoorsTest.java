package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Decision;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.servlet.FilterDoor;
import java.time.DayOfWeek;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Both front doors turn a value into a key by one rule: what a {@code @RateLimited} method is
 * charged under for a value is what a filter rule is charged under, after the rule's prefix. The
 * filter's key comes from its own rule and pipeline ({@link FilterDoor}); the annotation's from a
 * real call, as the limiter saw it.
 */
class KeyRulesAcrossDoorsTest {
  enum Tier {
    GOLD {
      @Override
      public String toString() {
        return "Gold tier";
      }
    }
  }

  record Account(String id) {}

  public static class Door {
    @RateLimited(key = "#value", limit = 1000, window = "1m", name = "door")
    public String call(Object value) {
      return "ok";
    }
  }

  /** The in-memory limiter, keeping the keys it was asked about. */
  static final class KeysSeen implements RateLimiter {
    final RateLimiter limiter = RateLimiter.inMemory();
    final List<String> keys = new ArrayList<>();

    @Override
    public Decision check(String key, Policy policy, long cost) {
      keys.add(key);
      return limiter.check(key, policy, cost);
    }

    @Override
    public MultiDecision checkAll(String key, List<Policy> policies, long cost) {
      keys.add(key);
      return limiter.checkAll(key, policies, cost);
    }

    @Override
    public CompletionStage<Decision> checkAsync(String key, Policy policy, long cost) {
      keys.add(key);
      return limiter.checkAsync(key, policy, cost);
    }

    @Override
    public Decision inspect(String key, Policy policy) {
      return limiter.inspect(key, policy);
    }

    @Override
    public void reset(String key, Policy policy) {
      limiter.reset(key, policy);
    }

    @Override
    public void close() {
      limiter.close();
    }
  }

  @Test
  void bothDoorsGiveTheSameKeyForTheSameValue() {
    UUID id = UUID.fromString("0F8FAD5B-D9CB-469F-A165-70867728950E");
    List<Object> values = Arrays.asList(Tier.GOLD, DayOfWeek.MONDAY, id, 42, 42L, 1.5, true, 'c', "alice", " ", "",
        null, List.of("a", 1), Map.of("id", 7), new Object(), new String[] {"a"}, new Account("a-1"));
    List<String> expected = List.of("GOLD", "MONDAY", "0f8fad5b-d9cb-469f-a165-70867728950e", "42", "42", "1.5",
        "true", "c", "alice", "<missing>", "<missing>", "<missing>", "[a, 1]", "{id=7}", "<missing>", "<missing>",
        "<missing>");
    KeysSeen seen = new KeysSeen();
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, AopAutoConfiguration.class))
        .withBean(RateLimiter.class, () -> seen)
        .withBean(Door.class)
        .run(context -> {
          Door door = context.getBean(Door.class);
          for (Object value : values) {
            door.call(value);
          }
        });
    List<String> filter = new ArrayList<>();
    for (Object value : values) {
      filter.add(FilterDoor.key("door", value).substring("door:".length()));
    }
    assertThat(seen.keys).as("@RateLimited").containsExactlyElementsOf(expected);
    assertThat(filter).as("a filter rule").containsExactlyElementsOf(expected);
  }
}

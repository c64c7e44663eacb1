package dev.ratelimit.internal.expression;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.internal.LogThrottle;
import java.util.ArrayList;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * One pipeline, two settings: what the filter ({@code CORRECT}) and an annotation ({@code THROW})
 * do with the same values, missing keys and bad costs.
 */
class PipelineTest {
  private static final Variables VARIABLES = Variables.builder().add("value").build();
  private final Lines log = new Lines();
  private final AtomicLong nanos = new AtomicLong();

  private Pipeline.Builder pipeline() {
    return Pipeline.builder(Sandbox.builder().dataObjects().build(), log)
        .throttle(new LogThrottle(nanos::get, TimeUnit.MINUTES.toNanos(1)));
  }

  private static SandboxContext with(Object value) {
    SandboxContext context = Sandbox.builder().dataObjects().build().context();
    context.setVariable("value", value);
    return context;
  }

  @Test
  void bothSettingsGiveTheSameKeys() {
    for (Pipeline.OnError onError : Pipeline.OnError.values()) {
      Pipeline.Key key = pipeline().onError(onError).build().key("#value", "place", VARIABLES, "r:");
      assertThat(key.evaluate(with("alice"))).isEqualTo("r:alice");
      assertThat(key.evaluate(with(java.time.DayOfWeek.MONDAY))).isEqualTo("r:MONDAY");
      assertThat(key.evaluate(with(7))).isEqualTo("r:7");
      assertThat(key.evaluate(with(null))).isEqualTo("r:" + Pipeline.MISSING);
      assertThat(key.evaluate(with(" "))).isEqualTo("r:" + Pipeline.MISSING);
      assertThat(key.evaluate(with(new Object()))).isEqualTo("r:" + Pipeline.MISSING);
    }
  }

  @Test
  void aMissingKeyIsLoggedOnceAMinutePerPlaceAndCause() {
    Pipeline.Key key = pipeline().subject("call").build().key("#value", "@RateLimited on A.b", VARIABLES, "");
    key.evaluate(with(null));
    key.evaluate(with(""));
    key.evaluate(with(new Object()));
    assertThat(log.lines).containsExactly(
        "WARNING @RateLimited on A.b: key expression '#value' gave null; the call was limited under the shared key"
            + " '<missing>' (logged at most once a minute)",
        "WARNING @RateLimited on A.b: key expression '#value' gave a java.lang.Object, which is not a key: a key is"
            + " a text, a number, a boolean, a character, an enum, a UUID, or a collection or map of them (read one of"
            + " its values, such as #user.id); the call was limited under the shared key '<missing>'"
            + " (logged at most once a minute)");
    nanos.addAndGet(TimeUnit.MINUTES.toNanos(1));
    key.evaluate(with(null));
    assertThat(log.lines.get(2)).endsWith("(1 more since the last line) (logged at most once a minute)");
  }

  @Test
  void aMissingKeyMayBeRejected() {
    Pipeline.Key key = pipeline().missingKey(Pipeline.MissingKey.REJECT).rejection("rejected with 400").build()
        .key("#value", "rule 'r'", VARIABLES, "r:");
    assertThat(key.evaluate(with(null))).isNull();
    assertThat(key.evaluate(with("k"))).isEqualTo("r:k");
    assertThat(log.lines).singleElement().asString().contains("the request was rejected with 400");
  }

  @Test
  void aFailingKeyExpressionIsAMissingKeyOrThrows() {
    Pipeline.Key corrected = pipeline().build().key("#value.name", "rule 'r'", VARIABLES, "r:");
    assertThat(corrected.evaluate(with(null))).isEqualTo("r:<missing>");
    assertThat(log.lines).singleElement().asString().startsWith("WARNING rule 'r': key expression '#value.name' failed (");
    Pipeline.Key thrown = pipeline().onError(Pipeline.OnError.THROW).build()
        .key("#value.name", "@RateLimited on A.b", VARIABLES, "");
    assertThatThrownBy(() -> thrown.evaluate(with(null))).isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("@RateLimited on A.b: key expression '#value.name' failed: ");
  }

  @Test
  void anExceptionOfTheExpressionsOwnCallPassesUnchanged() {
    Pipeline.Key key = pipeline().onError(Pipeline.OnError.THROW).build().key("#value.get(0)", "m", VARIABLES, "");
    assertThatThrownBy(() -> key.evaluate(with(List.of()))).isInstanceOf(IndexOutOfBoundsException.class);
  }

  @Test
  void costsAreCorrectedOrRefused() {
    Pipeline.Cost corrected = pipeline().build().cost("#value", "rule 'r'", VARIABLES);
    Pipeline.Cost strict = pipeline().onError(Pipeline.OnError.THROW).subject("call").build()
        .cost("#value", "@RateLimited on A.b", VARIABLES);
    for (Pipeline.Cost cost : List.of(corrected, strict)) {
      assertThat(cost.evaluate(with(3), 5)).isEqualTo(3);
      assertThat(cost.evaluate(with(2.5), 5)).isEqualTo(3);
      assertThat(cost.evaluate(with("4"), 5)).isEqualTo(4);
    }
    assertThat(corrected.evaluate(with(0), 5)).isEqualTo(1);
    assertThat(corrected.evaluate(with("x"), 5)).isEqualTo(1);
    assertThat(corrected.evaluate(with(9), 5)).as("never cheaper than asked").isEqualTo(5);
    assertThat(log.lines).containsExactly("WARNING rule 'r': cost expression '#value' gave 0, below 1; the request"
        + " was charged 1 (logged at most once a minute)");
    assertThatThrownBy(() -> strict.evaluate(with(0), 5)).isInstanceOf(IllegalStateException.class)
        .hasMessage("@RateLimited on A.b: cost expression '#value' gave 0, below 1; a cost must be a number from 1 to 5");
    assertThatThrownBy(() -> strict.evaluate(with("x"), 5)).hasMessageContaining("gave x, not a number");
    assertThatThrownBy(() -> strict.evaluate(with(9), 5)).hasMessageContaining("gave 9, above 5, the most one call"
        + " can be charged");
  }

  @Test
  void aConstantCostNoCheckCouldPassIsRefused() {
    Pipeline p = pipeline().build();
    p.cost("2 * 3", "m", VARIABLES).requirePossible(6, "policy 'p'");
    p.cost("#value", "m", VARIABLES).requirePossible(1, "policy 'p'");
    assertThat(p.cost("1.5", "m", VARIABLES).constant()).isEqualTo(2);
    assertThat(p.cost("1 / 0", "m", VARIABLES).constant()).isNull();
    assertThatThrownBy(() -> p.cost("10", "m", VARIABLES).requirePossible(5, "policy 'p'"))
        .hasMessage("m: cost 10 can never be charged: a cost must be a number from 1 to the capacity 5 of policy 'p'");
    assertThatThrownBy(() -> p.cost("-1", "m", VARIABLES).requirePossible(5, "policy 'p'"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aConditionGivesItsBooleanInBothSettings() {
    for (Pipeline.OnError onError : Pipeline.OnError.values()) {
      Pipeline.Condition condition = pipeline().onError(onError).build()
          .condition("#value >= 400", "rule 'r': count-when", VARIABLES, true, "the request was counted");
      assertThat(condition.test(with(500))).isTrue();
      assertThat(condition.test(with(200))).isFalse();
      assertThat(condition.variables()).containsExactly("value");
    }
    assertThat(log.lines).isEmpty();
  }

  @Test
  void aFailingConditionTakesTheDoorsSafeSideOrThrows() {
    Pipeline.Condition skip = pipeline().build()
        .condition("#value.internal", "rule 'r': skip-when", VARIABLES, false, "the rule applied");
    assertThat(skip.test(with(null))).as("failed: the rule applies").isFalse();
    assertThat(skip.test(with(java.util.Map.of("internal", "yes")))).as("not a boolean").isFalse();
    assertThat(skip.test(with(java.util.Map.of("internal", true)))).isTrue();
    assertThat(log.lines).hasSize(2);
    assertThat(log.lines.get(0)).startsWith("WARNING rule 'r': skip-when expression '#value.internal' failed (")
        .endsWith("; taken as false: the rule applied (logged at most once a minute)");
    assertThat(log.lines.get(1)).isEqualTo("WARNING rule 'r': skip-when expression '#value.internal' gave a"
        + " java.lang.String, not true or false; taken as false: the rule applied (logged at most once a minute)");
    skip.test(with(null));
    assertThat(log.lines).as("once a minute per place and cause").hasSize(2);

    Pipeline.Condition strict = pipeline().onError(Pipeline.OnError.THROW).build()
        .condition("#value", "@RateLimited on A.b: countWhen", VARIABLES, true, "the call was counted");
    assertThatThrownBy(() -> strict.test(with("yes"))).isInstanceOf(IllegalStateException.class)
        .hasMessage("@RateLimited on A.b: countWhen expression '#value' gave a java.lang.String, not true or false");
    assertThatThrownBy(() -> strict.test(with(null))).hasMessageContaining("gave null");
  }

  @Test
  void aConstantThatIsNoBooleanIsRefused() {
    Pipeline p = pipeline().build();
    assertThat(p.condition("true", "w", VARIABLES, true, "x").test(with(null))).isTrue();
    assertThatThrownBy(() -> p.condition("1", "rule 'r': when", VARIABLES, true, "x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("rule 'r': when expression '1' gives 1, not true or false");
    assertThatThrownBy(() -> p.condition("#nope", "rule 'r': when", VARIABLES, true, "x"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("#nope, an unknown variable");
  }

  /** A logger that keeps its lines. */
  static final class Lines implements System.Logger {
    final List<String> lines = new ArrayList<>();

    @Override
    public String getName() {
      return "lines";
    }

    @Override
    public boolean isLoggable(Level level) {
      return true;
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
      lines.add(level + " " + msg);
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String format, Object... params) {
      lines.add(level + " " + format);
    }
  }
}

package dev.ratelimit.internal.expression;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.springframework.expression.Expression;

/** The direct reading of {@code #name} and {@code #name['literal']} answers exactly as SpEL does. */
class DirectLookupTest {
  private static final Sandbox SANDBOX = Sandbox.builder().dataObjects().build();
  private static final Variables VARIABLES = Variables.builder().add("value").build();

  private static List<Object> values() {
    Map<String, Object> withNull = new HashMap<>();
    withNull.put("user", null);
    Map<String, String> caseInsensitive = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    caseInsensitive.put("USER", "bob");
    return Arrays.asList(Map.of("user", "alice", "a b", "x"), Map.of("other", "1"), withNull, caseInsensitive,
        Map.of(7, "seven"), null, "user", 42, List.of("a"), new Object());
  }

  @Test
  void theSameValueAsSpelOrSpelDecides() {
    for (String text : List.of("#value", "#value['user']", "#value['a b']", "#value['']")) {
      Expression expression = SANDBOX.parse(text, "test", VARIABLES);
      DirectLookup direct = DirectLookup.of(expression);
      assertThat(direct).as(text).isNotNull();
      for (Object value : values()) {
        SandboxContext context = SANDBOX.context();
        context.setVariable("value", value);
        Object answer = direct.value(context);
        if (answer == DirectLookup.NOT_DIRECT) {
          continue; // SpEL evaluates, as before
        }
        assertThat(answer).as("%s on %s", text, value).isEqualTo(expression.getValue(context));
      }
    }
  }

  @Test
  void whatSpelRefusesIsLeftToSpel() {
    Expression expression = SANDBOX.parse("#value['user']", "test", VARIABLES);
    for (Object value : new Object[] {null, "user", 42}) {
      SandboxContext context = SANDBOX.context();
      context.setVariable("value", value);
      assertThat(DirectLookup.of(expression).value(context)).isSameAs(DirectLookup.NOT_DIRECT);
      assertThatThrownBy(() -> expression.getValue(context)).as("SpEL's own answer is an error").isNotNull();
    }
  }

  @Test
  void otherShapesAreLeftToSpel() {
    List<String> others = new ArrayList<>(List.of("#value?.['user']", "#value['user'].length()", "#root",
        "#this", "#value[0]", "'literal'", "#value + 'x'", "#value['user']['x']"));
    for (String text : others) {
      assertThat(DirectLookup.of(SANDBOX.parse(text, "test", VARIABLES))).as(text).isNull();
    }
  }

  @Test
  void aPipelineKeyOfEitherShapeIsReadDirectly() {
    Pipeline pipeline = Pipeline.builder(SANDBOX, System.getLogger("test")).build();
    assertThat(pipeline.key("#value['user']", "place", VARIABLES, "r:").isDirect()).isTrue();
    assertThat(pipeline.key("#value", "place", VARIABLES, "r:").isDirect()).isTrue();
    assertThat(pipeline.key("#value.toString()", "place", VARIABLES, "r:").isDirect()).isFalse();
    SandboxContext context = SANDBOX.context();
    context.setVariable("value", Map.of("user", "alice"));
    assertThat(pipeline.key("#value['user']", "place", VARIABLES, "r:").evaluate(context)).isEqualTo("r:alice");
  }
}

package dev.ratelimit.internal.expression;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.standard.SpelExpressionParser;

/**
 * The one sandbox: what it refuses when an expression is parsed is what its context could not run,
 * for the filter's settings (no method calls, no beans) and the annotation's (data objects, beans).
 */
class SandboxTest {
  /** The filter's settings: only the door's own property readers. */
  private static final Sandbox PLAIN = Sandbox.builder().build();
  /** The annotation's settings: data objects and the beans {@code keys} and {@code &factory}. */
  private static final BeanResolver BEANS = (context, name) -> switch (name) {
    case "keys" -> new Keys();
    case "&factory" -> "the factory";
    default -> throw new org.springframework.expression.AccessException("no bean " + name);
  };
  private static final Sandbox DATA = Sandbox.builder().dataObjects()
      .beans(BEANS, name -> name.equals("keys") || name.equals("&factory")).build();
  private static final Variables VARIABLES = Variables.builder().add("user").add("name").add("items")
      .add("headers", Shape.map(Shape.leaf("a text"))).build();

  /** A bean key expressions call. */
  public static final class Keys {
    public String tenantOf(String user) {
      return user.substring(0, user.indexOf('/'));
    }
  }

  /** A data object, as a method's argument. */
  public record User(String id, String name) {
    public String getDisplay() {
      return name + " (" + id + ")";
    }
  }

  /** An enum, whose class has a static getter: the Class of an enum must never be reached. */
  public enum Tier {
    GOLD;

    /** Trips the canary: a static method, called by reading a property of the Class. */
    public static int getTripped() {
      return Canary.trip();
    }
  }

  /** Variables whose classes are known when parsed: final ones are followed, others are not. */
  private static final Variables TYPED = Variables.builder().add("name", Shape.of(String.class))
      .add("user", Shape.of(User.class)).add("tier", Shape.of(Tier.class)).add("count", Shape.of(int.class))
      .add("maybe", Shape.of(Optional.class)).add("items", Shape.of(List.class)).add("text", Shape.of(CharSequence.class))
      .build();

  @BeforeEach
  void resetCanary() {
    Canary.TRIPS.set(0);
  }

  /** Refused by both settings when parsed, and by both contexts when run anyway. */
  @ParameterizedTest
  @ValueSource(strings = {
      "T(java.lang.Runtime).getRuntime()",
      "T(java.lang.System).getenv('HOME')",
      "T(dev.ratelimit.internal.expression.Canary).trip()",
      "new dev.ratelimit.internal.expression.Canary()",
      "new java.io.File('x').delete()",
      "#name.getClass().forName('java.lang.Runtime')",
      "#user.class",
      "#name.class.classLoader",
      "#name = 'forged'",
      "#items++",
      "#name('x')",
      "#user instanceof T(String)",
  })
  void refusedWhenParsedAndWhenRun(String expression) {
    for (Sandbox sandbox : List.of(PLAIN, DATA)) {
      assertThatThrownBy(() -> sandbox.parse(expression, "place: key", VARIABLES))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("place: key expression '" + expression + "' is refused: ");
      assertThat(catchThrowable(() -> run(sandbox, expression))).as(expression).isNotNull();
    }
    assertThat(Canary.TRIPS).hasValue(0);
  }

  @Test
  void theMessageSaysWhatIsRefusedAndWhatToUse() {
    assertThatThrownBy(() -> DATA.parse("T(java.lang.System).getenv('HOME')", "m: key", VARIABLES))
        .hasMessageContaining("type references T(...) are not allowed")
        .hasMessageContaining("at 'T(java.lang.System)'")
        .hasMessageContaining("use the variables (#user, #name, #items, #headers), their properties and methods");
    assertThatThrownBy(() -> PLAIN.parse("new java.io.File('x')", "r: key", VARIABLES))
        .hasMessageContaining("constructors (new ...) are not allowed")
        .hasMessageContaining("indexing such as #map['key'] and operators");
    assertThatThrownBy(() -> DATA.parse("#name.getClass()", "m: key", VARIABLES))
        .hasMessageContaining("getClass() is not allowed");
    assertThatThrownBy(() -> DATA.parse("#f(1)", "m: key", VARIABLES)).hasMessageContaining("function calls");
    assertThatThrownBy(() -> DATA.parse("#name = 'x'", "m: key", VARIABLES)).hasMessageContaining("assignments");
  }

  @Test
  void methodCallsOnlyWithDataObjects() {
    assertThatThrownBy(() -> PLAIN.parse("#name.toUpperCase()", "r: key", VARIABLES))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("method calls are not allowed");
    assertThat(catchThrowable(() -> run(PLAIN, "#name.toUpperCase()"))).as("nor can its context call them")
        .isNotNull();
    assertThat(eval(DATA, "#name.toUpperCase()")).isEqualTo("ANN");
  }

  @Test
  void beanReferencesOnlyToBeansThatExist() {
    assertThatThrownBy(() -> PLAIN.parse("@keys.tenantOf(#name)", "r: key", VARIABLES))
        .hasMessageContaining("bean references are not allowed");
    assertThatThrownBy(() -> DATA.parse("@kyes.tenantOf(#name)", "m: key", VARIABLES))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("m: key expression '@kyes.tenantOf(#name)' reads @kyes, which is not a bean of the application");
    assertThat(eval(DATA, "@keys.tenantOf('acme/ann')")).isEqualTo("acme");
    assertThat(eval(DATA, "&factory")).isEqualTo("the factory");
  }

  @Test
  void unknownVariablesAndBarePropertiesAreRefused() {
    assertThatThrownBy(() -> DATA.parse("#usr.id", "m: key", VARIABLES))
        .hasMessage("m: key expression '#usr.id' reads #usr, an unknown variable; the variables are"
            + " #user, #name, #items, #headers");
    assertThatThrownBy(() -> DATA.parse("#a", "m: key", Variables.builder().add("b").describedAs("#b (the parameters)")
        .build())).hasMessageContaining("the variables are #b (the parameters)");
    assertThatThrownBy(() -> DATA.parse("name", "m: key", VARIABLES))
        .hasMessageContaining("reads 'name' of nothing; variables start with #, e.g. #name");
    assertThatThrownBy(() -> PLAIN.parse("#headers['x'] ?: remoteAddr", "r: key", VARIABLES))
        .hasMessageContaining("reads 'remoteAddr' of nothing");
    assertThat(DATA.parse("#this", "m: key", VARIABLES)).isNotNull();
  }

  @Test
  void syntaxErrorsAndBlanksAreRefused() {
    assertThatThrownBy(() -> PLAIN.parse("#headers['x'", "r: key", VARIABLES))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("r: key expression '#headers['x'' does not parse");
    assertThatThrownBy(() -> PLAIN.parse(" ", "r: cost", VARIABLES))
        .hasMessage("r: cost expression must not be blank");
  }

  /** A chain from a variable of a known shape is followed: a property no value has is refused. */
  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "#headers.Authorization    | #headers is a map: index it, #headers['Authorization']",
      "#headers['a'].length      | #headers[...] is a text: it has no properties",
      "#request.remoteAdr        | the request's properties are remoteAddr, userPrincipal",
      "#request.userPrincipal.nm | a principal's property is name",
  })
  void shapesAreFollowed(String expression, String why) {
    Shape principal = Shape.object("a principal's property is name", Map.of("name", Shape.leaf("a text")));
    Variables variables = Variables.builder().addAll(VARIABLES).add("request", Shape.object(
        "the request's properties are remoteAddr, userPrincipal",
        Map.of("remoteAddr", Shape.leaf("a text"), "userPrincipal", principal))).build();
    assertThatThrownBy(() -> PLAIN.parse(expression, "r: key", variables))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("r: key expression '" + expression + "' reads ")
        .hasMessageContaining(why);
    assertThat(PLAIN.parse("#request.userPrincipal?.name ?: #request.remoteAddr", "r: key", variables)).isNotNull();
  }

  /**
   * An enum's {@code declaringClass} reached its Class, and through the Class the static getters of
   * the enum's class (a static call the sandbox never makes): both refused when run, whatever is
   * known of the variable when parsed, as is reading anything of a Class the application passes.
   */
  @ParameterizedTest
  @ValueSource(strings = {
      "#tier.declaringClass",
      "#tier.getDeclaringClass()",
      "#tier.declaringClass.tripped",
      "#tier.getDeclaringClass().tripped",
      "#type.tripped",
      "#type.name",
  })
  void noClassIsReachedNorReadWhenRun(String expression) {
    SandboxContext context = DATA.context();
    context.setVariable("tier", Tier.GOLD);
    context.setVariable("type", Tier.class);
    assertThat(catchThrowable(() -> new SpelExpressionParser().parseExpression(expression).getValue(context)))
        .as(expression).isNotNull();
    assertThat(Canary.TRIPS).hasValue(0);
    assertThat(catchThrowable(() -> DATA.parse(expression, "m: key", Variables.builder().add("tier", Shape.of(Tier.class))
        .add("type", Shape.of(Class.class)).build()))).as("refused when parsed: the classes are final")
        .isInstanceOf(IllegalArgumentException.class);
  }

  /**
   * From a variable of a final class, each step is checked when parsed by the rules it is run by:
   * a method or property the class does not have, or the sandbox does not use, fails here, naming
   * it, instead of on every evaluation.
   */
  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "#name.nmae()                  | calls nmae() on #name, a java.lang.String, which has no such method",
      "#name.toUpperCase().nmae()    | calls nmae() on #name.toUpperCase(), a java.lang.String, which has no such method",
      "#name.valueOf(1)              | calls valueOf() on #name, a java.lang.String, whose valueOf() is never called: it is static",
      "#name.charAt()                | calls charAt() with 0 arguments on #name, a java.lang.String, whose charAt() takes 1",
      "#count.nope()                 | calls nope() on #count, a java.lang.Integer, which has no such method",
      "#maybe.nope()                 | calls nope() on #maybe, a java.util.Optional, which has no such method",
      "#user.nmae                    | reads 'nmae' of #user, which has no such property; #user is a "
          + "dev.ratelimit.internal.expression.SandboxTest$User: it has no public getter, accessor or field 'nmae'",
      "#user.id().nmae               | reads 'nmae' of #user.id(), which has no such property; #user.id() is a java.lang.String",
      "#tier.declaringClass          | is refused: a java.lang.Class (declaringClass of #tier, a "
          + "dev.ratelimit.internal.expression.SandboxTest$Tier) is not allowed in rate-limit expressions (at 'declaringClass')",
      "#tier.getDeclaringClass()     | is refused: a java.lang.Class (getDeclaringClass() of #tier, a "
          + "dev.ratelimit.internal.expression.SandboxTest$Tier) is not allowed",
      "#tier.declaringClass.name     | (at 'declaringClass')",
  })
  void stepsFromAFinalClassAreCheckedWhenParsed(String expression, String why) {
    assertThatThrownBy(() -> DATA.parse(expression, "m: key", TYPED))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("m: key expression '" + expression + "' ")
        .hasMessageContaining(why);
  }

  /** What a final class's values do have passes, and runs; other types are not followed when parsed. */
  @Test
  void stepsAFinalClassTakesPassAndRun() {
    SandboxContext context = DATA.context();
    context.setVariable("name", "ann");
    context.setVariable("user", new User("u-1", "Ann"));
    context.setVariable("tier", Tier.GOLD);
    context.setVariable("count", 7);
    context.setVariable("maybe", Optional.of(new User("u-2", "Bo")));
    Map<String, Object> expected = new java.util.LinkedHashMap<>();
    expected.put("#name.toUpperCase()", "ANN");
    expected.put("#name.substring(1).length()", 2);
    expected.put("#name.split('n')[0]", "a");
    expected.put("#name?.length()", 3);
    expected.put("#user.name", "Ann");
    expected.put("#user.display.toLowerCase()", "ann (u-1)");
    expected.put("#user.id().length()", 3);
    expected.put("#user.toString()", "User[id=u-1, name=Ann]");
    expected.put("#tier.name()", "GOLD");
    expected.put("#tier.ordinal()", 0);
    expected.put("#count.toString()", "7");
    expected.put("#maybe?.name", "Bo");
    expected.put("#maybe.isPresent()", true);
    expected.put("#method.length()", 6);
    context.setVariable("method", "charge");
    Variables variables = Variables.builder().addAll(TYPED).add("method", Shape.of(String.class)).build();
    expected.forEach((expression, value) -> assertThat(DATA.parse(expression, "m: key", variables).getValue(context))
        .as(expression).isEqualTo(value));
    assertThat(DATA.parse("#items.nmae()", "m: key", TYPED)).as("an interface: not followed").isNotNull();
    assertThat(DATA.parse("#text.nmae()", "m: key", TYPED)).isNotNull();
    assertThat(Shape.of(List.class).isAny()).isTrue();
    assertThat(Shape.of(String[].class).isAny()).isTrue();
    assertThat(Shape.of(void.class).isAny()).isTrue();
  }

  @Test
  void whatTheDataSandboxReads() {
    SandboxContext context = DATA.context();
    context.setVariable("user", new User("u-1", "Ann"));
    context.setVariable("items", Map.of("tier", "gold"));
    assertThat(DATA.parse("#user.name", "m: key", VARIABLES).getValue(context)).as("a record's component")
        .isEqualTo("Ann");
    assertThat(DATA.parse("#user.display", "m: key", VARIABLES).getValue(context)).as("a getter")
        .isEqualTo("Ann (u-1)");
    assertThat(DATA.parse("#items.tier", "m: key", VARIABLES).getValue(context)).as("a map's entry")
        .isEqualTo("gold");
    assertThat(DATA.parse("#user.id()", "m: key", VARIABLES).getValue(context)).isEqualTo("u-1");
    context.setVariable("name", new Keys());
    assertThat(catchThrowable(() -> new SpelExpressionParser().parseExpression("#name.hashCode()").getValue(context)))
        .as("Object's own methods are out of reach").isNotNull();
  }

  /**
   * Maps are read by key through Spring's own {@code MapAccessor} (spring-expression), not the
   * one of spring-context, deprecated for removal in Spring 7; read-only, as before: no accessor
   * of the sandbox is deprecated, and none writes an entry.
   */
  @Test
  void mapsAreReadByKeyAndNeverWritten() {
    SandboxContext context = DATA.context();
    Map<String, String> items = new java.util.HashMap<>(Map.of("tier", "gold"));
    context.setVariable("items", items);
    assertThat(DATA.parse("#items.tier", "m: key", VARIABLES).getValue(context)).isEqualTo("gold");
    assertThat(DATA.parse("#items['tier']", "m: key", VARIABLES).getValue(context)).isEqualTo("gold");
    assertThat(context.getPropertyAccessors())
        .anySatisfy(a -> assertThat(a).isInstanceOf(org.springframework.expression.spel.support.MapAccessor.class))
        .allSatisfy(a -> assertThat(a.getClass().isAnnotationPresent(Deprecated.class))
            .as(a.getClass().getName()).isFalse());
    // the assignment the parse-time check refuses, run anyway: the context's accessors refuse it too
    assertThat(catchThrowable(() -> new SpelExpressionParser().parseExpression("#items.tier = 'free'")
        .getValue(context))).isNotNull();
    assertThat(items).containsEntry("tier", "gold");
    assertThat(catchThrowable(() -> DATA.parse("#items.nope", "m: key", VARIABLES).getValue(context)))
        .as("a missing entry is an error, as before, not a silent null").isNotNull();
  }

  @Test
  void lazyVariablesAreComputedOnFirstUseOnly() {
    SandboxContext context = DATA.context();
    int[] computed = {0};
    context.setLazyVariable("name", () -> {
      computed[0]++;
      return "ann";
    });
    Expression twice = DATA.parse("#name + #name", "m: key", VARIABLES);
    assertThat(twice.getValue(context)).isEqualTo("annann");
    assertThat(computed[0]).isEqualTo(1);
  }

  @Test
  void variablesAndConstants() {
    assertThat(Sandbox.variables(DATA.parse("#user + #name + #this", "m: key", VARIABLES)))
        .containsExactlyInAnyOrder("user", "name");
    assertThat(Sandbox.isConstant(DATA.parse("2 * 3", "m: cost", VARIABLES))).isTrue();
    assertThat(Sandbox.isConstant(DATA.parse("#items.size()", "m: cost", VARIABLES))).isFalse();
  }

  private static Object run(Sandbox sandbox, String expression) {
    SandboxContext context = sandbox.context();
    context.setVariable("user", new User("u-1", "Ann"));
    context.setVariable("name", "ann");
    context.setVariable("items", 1);
    return new SpelExpressionParser().parseExpression(expression).getValue(context);
  }

  private static Object eval(Sandbox sandbox, String expression) {
    sandbox.parse(expression, "test", VARIABLES);
    return run(sandbox, expression);
  }
}

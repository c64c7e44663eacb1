package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.annotation.RateLimited;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;

/**
 * What the sandbox would refuse on every call fails start-up, for both front doors, naming the
 * method (or filter rule) and the expression. A {@code T(...)} in a {@code @RateLimited} key used to
 * pass start-up, then fail every call with a {@code SpelEvaluationException} (a 500), while the same
 * expression in a filter rule was refused at start-up.
 */
class RefusedExpressionsFailStartUpTest {
  static final AtomicInteger CALLS = new AtomicInteger();

  @BeforeEach
  void reset() {
    CALLS.set(0);
  }

  /** A real application with one method keyed on the environment. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class EnvironmentApp {
    @Bean
    EnvironmentReader reader() {
      return new EnvironmentReader();
    }
  }

  public static class EnvironmentReader {
    @RateLimited(key = "T(java.lang.System).getenv('HOME')", limit = 1, window = "1m")
    public String call() {
      CALLS.incrementAndGet();
      return "ran";
    }
  }

  @Test
  void aTypeReferenceInAnAnnotationsKeyFailsStartUpOfARealApplication() {
    SpringApplication app = new SpringApplication(EnvironmentApp.class);
    app.setWebApplicationType(WebApplicationType.NONE);
    assertThatThrownBy(() -> app.run("--spring.main.banner-mode=off").close())
        .hasStackTraceContaining("@RateLimited on " + EnvironmentReader.class.getName() + ".call: key expression"
            + " 'T(java.lang.System).getenv('HOME')' is refused: type references T(...) are not allowed");
    assertThat(CALLS).hasValue(0);
  }

  /** Each refused at start-up, as a key and as a cost, naming the method and the expression. */
  @ParameterizedTest
  @ValueSource(strings = {
      "T(java.lang.System).getenv('HOME')",
      "new java.io.File('x').exists()",
      "#user.getClass().getName()",
      "#user.class",
      "#user = 'forged'",
      "#user('x')",
      "@noSuchBean.tenantOf(#user)",
      "user",
  })
  void everyExpressionTheSandboxWouldRefuseFailsStartUp(String expression) {
    ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, AopAutoConfiguration.class));
    for (String attribute : new String[] {"key", "cost"}) {
      String source = attribute.equals("key")
          ? "@RateLimited(key = \"" + expression + "\")" : "@RateLimited(cost = \"" + expression + "\")";
      Class<?> service = attribute.equals("key") ? KeyServices.of(expression) : CostServices.of(expression);
      runner.withBean(service).run(context -> assertThat(context).as(source).hasFailed().getFailure()
          .hasStackTraceContaining("@RateLimited on " + service.getName() + ".call: " + attribute + " expression '"
              + expression + "'"));
    }
    assertThat(CALLS).hasValue(0);
  }

  /**
   * A parameter of a final class (a text, a number, a record, an enum) holds values of that very
   * class, so a method or property its values do not have, or that the sandbox would not use, is
   * known at start-up: it fails start-up, naming the method, the expression and the step. These
   * used to pass start-up, then fail every call; an enum's {@code declaringClass} reached a Class.
   */
  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "Typo         | key  | #name.nmae()                   | calls nmae() on #name, a java.lang.String, which has no such method",
      "Chained      | key  | #name.trim().nmae()            | calls nmae() on #name.trim(), a java.lang.String, which has no such method",
      "Static       | key  | #p0.valueOf(1)                 | whose valueOf() is never called: it is static",
      "RecordTypo   | key  | #user.nmae                     | reads 'nmae' of #user, which has no such property",
      "EnumClass    | key  | #tier.declaringClass           | is refused: a java.lang.Class (declaringClass of #tier",
      "EnumGetClass | key  | #tier.getDeclaringClass().name | is refused: a java.lang.Class (getDeclaringClass() of #tier",
      "MethodName   | key  | #method.nmae()                 | calls nmae() on #method, a java.lang.String, which has no such method",
      "NumberTypo   | cost | #count.nope()                  | calls nope() on #count, a java.lang.Integer, which has no such method",
      "Arity        | cost | #name.length(1)                | calls length() with 1 argument on #name, a java.lang.String, whose length() takes 0",
  })
  void aStepAParameterOfAFinalClassCannotTakeFailsStartUp(String service, String attribute, String expression,
      String why) throws ClassNotFoundException {
    Class<?> bean = Class.forName(FinalParameters.class.getName() + "$" + service);
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, AopAutoConfiguration.class))
        .withBean(bean)
        .run(context -> assertThat(context).as(expression).hasFailed().getFailure()
            .hasStackTraceContaining("@RateLimited on " + bean.getName() + ".call: " + attribute + " expression '"
                + expression + "' ")
            .hasStackTraceContaining(why));
    assertThat(CALLS).hasValue(0);
  }

  /**
   * A parameter of any other type (an interface, a class that may be extended, {@code Object}) may
   * hold a value of a class with more methods: not checked at start-up, so such a mistake fails each
   * call, before the method runs; and an enum's Class is refused there too.
   */
  @Test
  void aParameterOfAnotherTypeIsCheckedWhenCalled() {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, AopAutoConfiguration.class))
        .withBean(FinalParameters.Open.class)
        .run(context -> {
          assertThat(context).hasNotFailed();
          FinalParameters.Open open = context.getBean(FinalParameters.Open.class);
          assertThatThrownBy(() -> open.typo("ann")).isInstanceOf(IllegalStateException.class)
              .hasMessageStartingWith("@RateLimited on " + FinalParameters.Open.class.getName() + ".typo: key"
                  + " expression '#name.nmae()' failed: ");
          assertThatThrownBy(() -> open.tier(FinalParameters.Tier.GOLD)).isInstanceOf(IllegalStateException.class)
              .hasMessageStartingWith("@RateLimited on " + FinalParameters.Open.class.getName() + ".tier: key"
                  + " expression '#tier.declaringClass' failed: ");
        });
    assertThat(CALLS).hasValue(0);
  }

  /** One service per refused step; parameters of final classes. */
  static final class FinalParameters {
    public record User(String id, String name) {}

    public enum Tier { GOLD }

    public static class Typo {
      @RateLimited(key = "#name.nmae()", limit = 5, window = "1m")
      public String call(String name) {
        return ran();
      }
    }

    public static class Chained {
      @RateLimited(key = "#name.trim().nmae()", limit = 5, window = "1m")
      public String call(String name) {
        return ran();
      }
    }

    public static class Static {
      @RateLimited(key = "#p0.valueOf(1)", limit = 5, window = "1m")
      public String call(String name) {
        return ran();
      }
    }

    public static class RecordTypo {
      @RateLimited(key = "#user.nmae", limit = 5, window = "1m")
      public String call(User user) {
        return ran();
      }
    }

    public static class EnumClass {
      @RateLimited(key = "#tier.declaringClass", limit = 5, window = "1m")
      public String call(Tier tier) {
        return ran();
      }
    }

    public static class EnumGetClass {
      @RateLimited(key = "#tier.getDeclaringClass().name", limit = 5, window = "1m")
      public String call(Tier tier) {
        return ran();
      }
    }

    public static class MethodName {
      @RateLimited(key = "#method.nmae()", limit = 5, window = "1m")
      public String call(String user) {
        return ran();
      }
    }

    public static class NumberTypo {
      @RateLimited(key = "'k'", cost = "#count.nope()", limit = 5, window = "1m")
      public String call(int count) {
        return ran();
      }
    }

    public static class Arity {
      @RateLimited(key = "'k'", cost = "#name.length(1)", limit = 5, window = "1m")
      public String call(String name) {
        return ran();
      }
    }

    /** Parameters of types that are not final: checked when called. */
    public static class Open {
      @RateLimited(key = "#name.nmae()", limit = 5, window = "1m")
      public String typo(CharSequence name) {
        return ran();
      }

      @RateLimited(key = "#tier.declaringClass", limit = 5, window = "1m")
      public String tier(Enum<?> tier) {
        return ran();
      }
    }
  }

  @Test
  void theSameExpressionInAFilterRuleFailsStartUpToo() {
    new WebApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class, AopAutoConfiguration.class))
        .withPropertyValues("ratelimit.policies.api.limit=10", "ratelimit.policies.api.window=1m",
            "ratelimit.filter.rules[0].name=env", "ratelimit.filter.rules[0].paths=/**",
            "ratelimit.filter.rules[0].policies=api",
            "ratelimit.filter.rules[0].key=T(java.lang.System).getenv('HOME')")
        .run(context -> assertThat(context).hasFailed().getFailure()
            .hasStackTraceContaining("ratelimit.filter.rules[0]")
            .hasStackTraceContaining("rule 'env': key expression 'T(java.lang.System).getenv('HOME')' is refused:"
                + " type references T(...) are not allowed"));
  }

  /** One service per refused key expression. */
  static final class KeyServices {
    static Class<?> of(String expression) {
      return switch (expression) {
        case "T(java.lang.System).getenv('HOME')" -> TypeReference.class;
        case "new java.io.File('x').exists()" -> Constructor.class;
        case "#user.getClass().getName()" -> GetClass.class;
        case "#user.class" -> ClassProperty.class;
        case "#user = 'forged'" -> Assignment.class;
        case "#user('x')" -> Function.class;
        case "@noSuchBean.tenantOf(#user)" -> UnknownBean.class;
        default -> BareProperty.class;
      };
    }

    public static class TypeReference {
      @RateLimited(key = "T(java.lang.System).getenv('HOME')", limit = 5, window = "1m")
      public String call(String user) {
        return ran();
      }
    }

    public static class Constructor {
      @RateLimited(key = "new java.io.File('x').exists()", limit = 5, window = "1m")
      public String call(String user) {
        return ran();
      }
    }

    public static class GetClass {
      @RateLimited(key = "#user.getClass().getName()", limit = 5, window = "1m")
      public String call(String user) {
        return ran();
      }
    }

    public static class ClassProperty {
      @RateLimited(key = "#user.class", limit = 5, window = "1m")
      public String call(String user) {
        return ran();
      }
    }

    public static class Assignment {
      @RateLimited(key = "#user = 'forged'", limit = 5, window = "1m")
      public String call(String user) {
        return ran();
      }
    }

    public static class Function {
      @RateLimited(key = "#user('x')", limit = 5, window = "1m")
      public String call(String user) {
        return ran();
      }
    }

    public static class UnknownBean {
      @RateLimited(key = "@noSuchBean.tenantOf(#user)", limit = 5, window = "1m")
      public String call(String user) {
        return ran();
      }
    }

    public static class BareProperty {
      @RateLimited(key = "user", limit = 5, window = "1m")
      public String call(String user) {
        return ran();
      }
    }
  }

  /** One service per refused cost expression. */
  static final class CostServices {
    static Class<?> of(String expression) {
      return switch (expression) {
        case "T(java.lang.System).getenv('HOME')" -> TypeReference.class;
        case "new java.io.File('x').exists()" -> Constructor.class;
        case "#user.getClass().getName()" -> GetClass.class;
        case "#user.class" -> ClassProperty.class;
        case "#user = 'forged'" -> Assignment.class;
        case "#user('x')" -> Function.class;
        case "@noSuchBean.tenantOf(#user)" -> UnknownBean.class;
        default -> BareProperty.class;
      };
    }

    public static class TypeReference {
      @RateLimited(cost = "T(java.lang.System).getenv('HOME')", limit = 5, window = "1m")
      public String call(String user) {
        return ran();
      }
    }

    public static class Constructor {
      @RateLimited(cost = "new java.io.File('x').exists()", limit = 5, window = "1m")
      public String call(String user) {
        return ran();
      }
    }

    public static class GetClass {
      @RateLimited(cost = "#user.getClass().getName()", limit = 5, window = "1m")
      public String call(String user) {
        return ran();
      }
    }

    public static class ClassProperty {
      @RateLimited(cost = "#user.class", limit = 5, window = "1m")
      public String call(String user) {
        return ran();
      }
    }

    public static class Assignment {
      @RateLimited(cost = "#user = 'forged'", limit = 5, window = "1m")
      public String call(String user) {
        return ran();
      }
    }

    public static class Function {
      @RateLimited(cost = "#user('x')", limit = 5, window = "1m")
      public String call(String user) {
        return ran();
      }
    }

    public static class UnknownBean {
      @RateLimited(cost = "@noSuchBean.tenantOf(#user)", limit = 5, window = "1m")
      public String call(String user) {
        return ran();
      }
    }

    public static class BareProperty {
      @RateLimited(cost = "user", limit = 5, window = "1m")
      public String call(String user) {
        return ran();
      }
    }
  }

  static String ran() {
    CALLS.incrementAndGet();
    return "ran";
  }
}

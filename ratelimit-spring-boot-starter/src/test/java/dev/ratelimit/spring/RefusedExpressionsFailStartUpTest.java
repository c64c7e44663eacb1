package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ratelimit.annotation.RateLimited;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
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

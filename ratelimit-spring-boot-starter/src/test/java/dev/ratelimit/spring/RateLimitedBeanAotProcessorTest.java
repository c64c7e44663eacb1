package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.annotation.RateLimited;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.ReflectionHintsPredicates;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.javapoet.ClassName;

/**
 * A bean with {@code @RateLimited} keeps its methods reflectively readable in a native image, as
 * Spring's AOT step finds the processor (through {@code META-INF/spring/aot.factories}).
 */
class RateLimitedBeanAotProcessorTest {
  private static final ReflectionHintsPredicates REFLECTION = RuntimeHintsPredicates.reflection();

  public static class Orders {
    @RateLimited(key = "#user", limit = 5, window = "1m")
    public String place(String user) {
      return "placed";
    }
  }

  public interface QuoteApi {
    @RateLimited(key = "#symbol", limit = 5, window = "1s")
    String quote(String symbol);
  }

  public static class Quotes implements QuoteApi {
    @Override
    public String quote(String symbol) {
      return symbol;
    }
  }

  @RateLimited(key = "'all'", limit = 5, window = "1s")
  public static class Everything {
    public void run() {}
  }

  public static class Plain {
    public void run() {}
  }

  /** The hints the aot.factories processors contribute for a bean of {@code type}; null when none does. */
  private static RuntimeHints hintsFor(Class<?> type) {
    List<BeanRegistrationAotProcessor> processors = SpringFactoriesLoader
        .forResourceLocation("META-INF/spring/aot.factories").load(BeanRegistrationAotProcessor.class);
    assertThat(processors).anySatisfy(p -> assertThat(p).isInstanceOf(RateLimitedBeanAotProcessor.class));
    DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
    beans.registerBeanDefinition("bean", new RootBeanDefinition(type));
    DefaultGenerationContext generation = new DefaultGenerationContext(
        new ClassNameGenerator(ClassName.get("dev.ratelimit.spring", "AotTest")), new InMemoryGeneratedFiles());
    boolean any = false;
    for (BeanRegistrationAotProcessor processor : processors) {
      BeanRegistrationAotContribution contribution = processor.processAheadOfTime(RegisteredBean.of(beans, "bean"));
      if (contribution != null) {
        contribution.applyTo(generation, null);
        any = true;
      }
    }
    return any ? generation.getRuntimeHints() : null;
  }

  @Test
  void aBeanWithAnAnnotatedMethodKeepsItsMethods() {
    RuntimeHints hints = hintsFor(Orders.class);
    assertThat(hints).isNotNull();
    assertThat(REFLECTION.onMethodInvocation(Orders.class, "place")).accepts(hints);
  }

  @Test
  void anAnnotationOnAnInterfaceOrTheTypeCounts() {
    RuntimeHints quotes = hintsFor(Quotes.class);
    assertThat(quotes).isNotNull();
    assertThat(REFLECTION.onMethodInvocation(Quotes.class, "quote")).accepts(quotes);
    assertThat(REFLECTION.onMethodInvocation(QuoteApi.class, "quote")).accepts(quotes);
    RuntimeHints everything = hintsFor(Everything.class);
    assertThat(everything).isNotNull();
    assertThat(REFLECTION.onMethodInvocation(Everything.class, "run")).accepts(everything);
  }

  @Test
  void aBeanWithoutTheAnnotationGetsNothing() {
    assertThat(hintsFor(Plain.class)).isNull();
    assertThat(RateLimitedBeanAotProcessor.annotatedTypes(Plain.class)).isEmpty();
  }
}

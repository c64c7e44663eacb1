package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import dev.ratelimit.tck.docs.DocPage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.test.context.ContextConfiguration;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** The Spring Boot example of docs/spring-boot.md (and its controller in README.md), YAML and code, as written there. */
@SpringBootTest(classes = ReadmeExamplesTest.App.class, properties = "ratelimit.backend=memory")
@ContextConfiguration(initializers = ReadmeExamplesTest.PageYaml.class)
@AutoConfigureMockMvc
class ReadmeExamplesTest {

  private static final String PAGE = "docs/spring-boot.md";

  @RestController
  static class Ping {
    @GetMapping("/api/ping")
    String ping() {
      return "pong";
    }
  }

  /** The page's YAML, as the application's configuration (backend memory aside: no Redis at its URL). */
  static class PageYaml implements ApplicationContextInitializer<ConfigurableApplicationContext> {
    @Override
    public void initialize(ConfigurableApplicationContext context) {
      String yaml = DocPage.read(PAGE).block("yaml", "backend: auto");
      try {
        new YamlPropertySourceLoader().load(PAGE, new ByteArrayResource(yaml.getBytes(StandardCharsets.UTF_8)))
            .forEach(context.getEnvironment().getPropertySources()::addLast);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import({OrderController.class, PartnerClient.class, Ping.class})
  static class App {}

  @Autowired
  MockMvc mvc;

  @Autowired
  PartnerClient partner;

  @Test
  void thePagesShowTheCodeThisTestRuns() {
    for (String name : java.util.List.of(PAGE, "README.md")) {
      DocPage page = DocPage.read(name);
      page.assertRunBy(page.block("java", "class OrderController"),
          "src/test/java/dev/ratelimit/spring/SpringBootPageExamples.java");
    }
  }

  @Test
  void theAnnotatedControllerAllowsTheBurstThenAnswers429() throws Exception {
    for (int i = 0; i < 5; i++) {
      mvc.perform(post("/orders/u1").contentType(MediaType.APPLICATION_JSON).content("{\"item\":\"book\"}"))
          .andExpect(status().isOk())
          .andExpect(jsonPath("$.item").value("book"));
    }
    mvc.perform(post("/orders/u1").contentType(MediaType.APPLICATION_JSON).content("{\"item\":\"book\"}"))
        .andExpect(status().isTooManyRequests())
        .andExpect(jsonPath("$.violated-policies[0]").value("burst"));
  }

  @Test
  void theFilterRuleFromTheYamlLimitsThePublicApi() throws Exception {
    mvc.perform(get("/api/ping")).andExpect(status().isOk())
        .andExpect(header().string("RateLimit-Policy", "\"api\";q=100;w=60"));
  }

  @Test
  void theOutboundClientWaitsForItsTurn() {
    long started = System.nanoTime();
    for (int i = 0; i < 3; i++) {
      assertThat(partner.quote("ACME")).isEqualTo(new Quote("ACME"));
    }
    assertThat((System.nanoTime() - started) / 1_000_000).as("3 calls at 5 per second, no burst: >= 400 ms")
        .isGreaterThanOrEqualTo(390);
  }
}

package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.annotation.RateLimited.Mode;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.stereotype.Component;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** The README's Spring Boot example, as written there (its YAML is application-readme.yml). */
@SpringBootTest(classes = ReadmeExamplesTest.App.class)
@AutoConfigureMockMvc
@ActiveProfiles("readme")
class ReadmeExamplesTest {

  record Order(String item) {}

  record Quote(String symbol) {}

  @RestController
  static class OrderController {
    @PostMapping("/orders/{userId}")
    @RateLimited(key = "#userId", policy = "api")                        // a policy from configuration
    @RateLimited(key = "#userId", limit = 5, window = "1m", name = "burst") // and an inline one, checked together
    Order place(@PathVariable String userId, @RequestBody Order order) {
      return order;
    }

    @GetMapping("/api/ping")
    String ping() {
      return "pong";
    }
  }

  @Component
  static class PartnerClient {                                                  // outbound: wait for our turn
    @RateLimited(key = "'partner-api'", limit = 5, window = "1s", burst = 1, mode = Mode.WAIT, maxWait = "10s")
    Quote quote(String symbol) {
      return new Quote(symbol);
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import({OrderController.class, PartnerClient.class})
  static class App {}

  @Autowired
  MockMvc mvc;

  @Autowired
  PartnerClient partner;

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

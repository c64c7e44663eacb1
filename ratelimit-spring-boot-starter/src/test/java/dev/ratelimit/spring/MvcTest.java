package dev.ratelimit.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.request.RequestPostProcessor;

/** {@code @RateLimited} controllers through MockMvc: 429s, headers, client IPs behind proxies. */
@SpringBootTest(classes = WebApp.class, properties = {
    "ratelimit.trusted-proxies=10.0.0.0/8,fd00::/8",
    "ratelimit.headers.legacy=true"})
@AutoConfigureMockMvc
class MvcTest {
  @Autowired
  MockMvc mvc;

  @Autowired
  RateLimiter limiter;

  private static RequestPostProcessor peer(String address) {
    return request -> {
      request.setRemoteAddr(address);
      return request;
    };
  }

  @Test
  void aLimitedControllerAnswers429WithHeadersAndAProblem() throws Exception {
    mvc.perform(get("/hello/mvc-alice"))
        .andExpect(status().isOk())
        .andExpect(header().string("RateLimit-Policy", "\"hello\";q=2;w=60"))
        .andExpect(header().string("RateLimit", "\"hello\";r=1;t=30"))
        .andExpect(header().string("X-RateLimit-Limit", "2"));
    mvc.perform(get("/hello/mvc-alice")).andExpect(status().isOk());
    mvc.perform(get("/hello/mvc-alice"))
        .andExpect(status().isTooManyRequests())
        .andExpect(header().string("Retry-After", "30"))
        .andExpect(header().string("Cache-Control", "no-store"))
        .andExpect(header().string("RateLimit", "\"hello\";r=0;t=30"))
        .andExpect(content().contentTypeCompatibleWith("application/problem+json"))
        .andExpect(jsonPath("$.status").value(429))
        .andExpect(jsonPath("$.type").value("https://iana.org/assignments/http-problem-types#quota-exceeded"))
        .andExpect(jsonPath("$.violated-policies[0]").value("hello"));
  }

  @Test
  void onlyTheControllerMethodHandlingTheRequestWritesItsHeaders() throws Exception {
    Policy partner = Policy.of(50, Duration.ofHours(1)).withName("partner");
    long before = limiter.inspect("partner-api", partner).remaining();
    mvc.perform(get("/relay/mvc-bob")) // a limited controller calling a limited outbound client
        .andExpect(status().isOk())
        .andExpect(header().string("RateLimit-Policy", "\"relay\";q=3;w=60"))
        .andExpect(header().string("RateLimit", "\"relay\";r=2;t=20"))
        .andExpect(header().string("X-RateLimit-Limit", "3"));
    mvc.perform(get("/quote/ACME")) // an unlimited controller calling it (WAIT mode)
        .andExpect(status().isOk())
        .andExpect(header().doesNotExist("RateLimit-Policy"))
        .andExpect(header().doesNotExist("RateLimit"))
        .andExpect(header().doesNotExist("X-RateLimit-Limit"));
    assertThat(before - limiter.inspect("partner-api", partner).remaining())
        .as("both calls went through the outbound client's limit").isEqualTo(2);
    mvc.perform(get("/rates")) // REJECT mode on the outbound client: still not the caller's limit
        .andExpect(status().isOk())
        .andExpect(header().doesNotExist("RateLimit-Policy"));
    assertThat(limiter.inspect("partner-rates", Policy.of(50, Duration.ofHours(1)).withName("partner-rates"))
        .remaining()).isEqualTo(49);
    mvc.perform(get("/paced/mvc-bob")) // WAIT mode on the controller itself: its own limit
        .andExpect(status().isOk())
        .andExpect(header().string("RateLimit-Policy", "\"paced\";q=5;w=60"));
  }

  @Test
  void aForgedForwardedForFromAnUntrustedPeerChangesNothing() throws Exception {
    mvc.perform(get("/ip").with(peer("198.51.100.9"))).andExpect(status().isOk());
    mvc.perform(get("/ip").with(peer("198.51.100.9")).header("X-Forwarded-For", "203.0.113.50"))
        .andExpect(status().isTooManyRequests());
    mvc.perform(get("/ip").with(peer("198.51.100.9")).header("Forwarded", "for=203.0.113.51"))
        .andExpect(status().isTooManyRequests());
  }

  @Test
  void clientNetworkGivesAnIpv6Slash64OneBucketAndAnIpv4AddressItsOwn() throws Exception {
    mvc.perform(get("/net").with(peer("2001:db8:1:2::7"))).andExpect(status().isOk());
    mvc.perform(get("/net").with(peer("2001:db8:1:2:ffff::8"))).andExpect(status().isTooManyRequests());
    mvc.perform(get("/net").with(peer("2001:db8:1:3::7"))).andExpect(status().isOk());
    mvc.perform(get("/net").with(peer("198.51.100.20"))).andExpect(status().isOk());
    mvc.perform(get("/net").with(peer("198.51.100.21"))).andExpect(status().isOk());
    mvc.perform(get("/net").with(peer("198.51.100.20"))).andExpect(status().isTooManyRequests());
    assertThat(limiter.inspect("2001:db8:1:2::/64", Policy.of(1, Duration.ofMinutes(1)).withName("per-network"))
        .remaining()).isZero();
  }

  @Test
  void aTrustedProxyChainGivesTheRealClientsBucket() throws Exception {
    mvc.perform(get("/ip").with(peer("10.1.2.3")).header("X-Forwarded-For", "203.0.113.7, 10.9.9.9"))
        .andExpect(status().isOk());
    mvc.perform(get("/ip").with(peer("10.4.5.6")).header("X-Forwarded-For", "203.0.113.7"))
        .andExpect(status().isTooManyRequests());
    mvc.perform(get("/ip").with(peer("fd00::1")).header("Forwarded", "for=\"[2001:db8::7]:4711\""))
        .andExpect(status().isOk());
    mvc.perform(get("/ip").with(peer("10.4.5.6")).header("X-Forwarded-For", "2001:db8::7"))
        .andExpect(status().isTooManyRequests());
    assertThat(mvc.perform(get("/ip").with(peer("10.1.2.3"))).andReturn().getResponse().getStatus())
        .as("the proxy itself is one more client").isEqualTo(200);
  }
}

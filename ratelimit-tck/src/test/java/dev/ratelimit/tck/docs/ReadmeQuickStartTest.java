package dev.ratelimit.tck.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.*;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The library's quick start, in README.md and docs/getting-started.md, run as written there. */
class ReadmeQuickStartTest {
  private static final String SOURCE = "src/test/java/dev/ratelimit/tck/docs/ReadmeQuickStartTest.java";

  @Test
  void bothPagesShowTheCodeThisTestRuns() {
    for (String page : List.of("README.md", "docs/getting-started.md")) {
      DocPage doc = DocPage.read(page);
      doc.assertRunBy(doc.block("java", "RateLimiter.inMemory()"), SOURCE);
    }
  }

  @Test
  void quickStart() {
    RateLimiter limiter = RateLimiter.inMemory();                 // Caffeine-backed, system clock
    Policy perUser = Policy.parse("100/1m");                      // GCRA, 100 per minute, burst 100
    Policy uploads = Policy.of(10, Duration.ofHours(1), Algorithm.SLIDING_LOG).withName("uploads");

    Decision d = limiter.check("user:42", perUser);               // cost 1
    if (!d.allowed()) {
      // reject: d.retryAfter() is exactly when the same check would pass
    }
    assertThat(d.allowed()).isTrue();
    assertThat(d.remaining()).isEqualTo(99);
    MultiDecision m = limiter.checkAll("user:42", List.of(perUser, uploads), 3);  // all or nothing
    assertThat(m.allowed()).isTrue();
    assertThat(m.limiting().policy()).isEqualTo(uploads);
    assertThat(m.limiting().remaining()).isEqualTo(7);
    boolean ok = limiter.tryAcquire("user:7", perUser);           // only the answer: check(...).allowed()
    assertThat(ok).isTrue();
    assertThat(limiter.inspect("user:7", perUser).remaining()).isEqualTo(99);
    limiter.close();
  }

  /** docs/getting-started.md's check across keys, run as written there. */
  @Test
  void checksAcrossKeys() {
    DocPage doc = DocPage.read("docs/getting-started.md");
    doc.assertRunBy(doc.block("java", "KeyedPolicy.of(\"tenant:acme\""), SOURCE);
    try (RateLimiter limiter = RateLimiter.inMemory()) {
      Policy perUser = Policy.parse("100/1m");
      assertThat(limiter.check("user:42", perUser, 100).allowed()).isTrue();
      Policy perTenant = Policy.parse("1000/1m").withName("per-tenant");
      MultiDecision both = limiter.checkAll(List.of(
          KeyedPolicy.of("tenant:acme", perTenant),
          KeyedPolicy.of("user:42", perUser)), 1);                  // allowed only if both pass; else neither consumed
      assertThat(both.allowed()).isFalse();
      assertThat(both.limiting().policy()).isEqualTo(perUser);
      assertThat(limiter.inspect("tenant:acme", perTenant).remaining()).as("neither consumed").isEqualTo(1000);
    }
  }
}

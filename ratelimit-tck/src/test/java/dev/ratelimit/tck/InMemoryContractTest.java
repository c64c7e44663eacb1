package dev.ratelimit.tck;

import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.tck.docs.DocPage;
import org.junit.jupiter.api.Test;

/**
 * The contract suite against the in-memory backend, bounded to 1,000 states: every test's live keys
 * fit, and the flood of one-off keys goes well past it.
 */
class InMemoryContractTest extends RateLimiterContract {
  @Override
  protected Backend newBackend() {
    return InMemoryBackend.builder().maximumKeys(1_000).build();
  }

  /** docs/writing-a-backend.md shows this class as the way to run the suite. */
  @Test
  void isThePagesExample() {
    DocPage page = DocPage.read("docs/writing-a-backend.md");
    page.assertRunBy(page.block("java", "extends RateLimiterContract"), "src/test/java/dev/ratelimit/tck/InMemoryContractTest.java");
  }
}

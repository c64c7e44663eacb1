package dev.ratelimit.tck;

import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.tck.docs.DocPage;
import org.junit.jupiter.api.Test;

/** 16 threads on one in-memory backend admit exactly the limit. */
class InMemoryConcurrencyTest extends ConcurrencyContract {
  @Override
  protected Backend newBackend(int instance) {
    return InMemoryBackend.create(); // one instance per run, so a fresh backend each time
  }

  /** docs/writing-a-backend.md shows this class as the way to run the suite. */
  @Test
  void isThePagesExample() {
    DocPage page = DocPage.read("docs/writing-a-backend.md");
    page.assertRunBy(page.block("java", "extends ConcurrencyContract"), "src/test/java/dev/ratelimit/tck/InMemoryConcurrencyTest.java");
  }
}

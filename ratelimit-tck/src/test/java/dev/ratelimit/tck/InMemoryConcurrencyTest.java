package dev.ratelimit.tck;

import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.spi.Backend;

/** 16 threads on one in-memory backend admit exactly the limit. */
class InMemoryConcurrencyTest extends ConcurrencyContract {
  @Override
  protected Backend newBackend(int instance) {
    return InMemoryBackend.create(); // one instance per run, so a fresh backend each time
  }
}

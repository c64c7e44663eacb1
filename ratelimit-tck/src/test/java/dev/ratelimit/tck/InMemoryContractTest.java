package dev.ratelimit.tck;

import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.spi.Backend;

/** The contract suite against the in-memory backend. */
class InMemoryContractTest extends RateLimiterContract {
  @Override
  protected Backend newBackend() {
    return InMemoryBackend.create();
  }
}

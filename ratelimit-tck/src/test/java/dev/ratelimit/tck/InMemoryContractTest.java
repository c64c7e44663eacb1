package dev.ratelimit.tck;

import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.spi.Backend;

/**
 * The contract suite against the in-memory backend, bounded to 1,000 states: every test's live keys
 * fit, and the flood of one-off keys goes well past it.
 */
class InMemoryContractTest extends RateLimiterContract {
  @Override
  protected Backend newBackend() {
    return InMemoryBackend.builder().maximumKeys(1_000).build();
  }
}

package dev.ratelimit.tck;

import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.spi.Backend;

/** The reservation contract against the in-memory backend. */
class InMemoryReservationContractTest extends ReservationContract {
  @Override
  protected Backend newBackend() {
    return InMemoryBackend.builder().maximumKeys(1_000).build();
  }
}

package dev.ratelimit.tck;


import dev.ratelimit.ManualClock;
import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.spi.Backend;

/**
 * The contract every backend passes, unchanged: extend it and supply a backend.
 *
 * <pre>{@code
 * class InMemoryContractTest extends RateLimiterContract {
 *   protected Backend newBackend() { return InMemoryBackend.create(); }
 * }
 * }</pre>
 *
 * <p>Each test runs on a {@link ManualClock} that starts at epoch second 1,700,000,000 and uses keys
 * of its own, so a backend may share storage across tests.
 */
public abstract class RateLimiterContract extends ClockAndStoreContract {
}

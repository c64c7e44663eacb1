package dev.ratelimit;

import dev.ratelimit.memory.InMemoryBackend;
import java.lang.reflect.Field;
import java.util.function.LongConsumer;

/**
 * A bug injected into the in-memory backend, through its package-private renewal hook (by
 * reflection): a check that moves a key's expiry, such as one adding a second policy to the key,
 * throws inside the backend.
 */
final class RenewalHook {
  private RenewalHook() {}

  static void fail(InMemoryBackend backend) throws ReflectiveOperationException {
    set(backend, oldHold -> {
      throw new IllegalStateException("injected");
    });
  }

  static void clear(InMemoryBackend backend) throws ReflectiveOperationException {
    set(backend, null);
  }

  private static void set(InMemoryBackend backend, LongConsumer hook) throws ReflectiveOperationException {
    Field field = InMemoryBackend.class.getDeclaredField("renewalHook");
    field.setAccessible(true);
    field.set(backend, hook);
  }
}

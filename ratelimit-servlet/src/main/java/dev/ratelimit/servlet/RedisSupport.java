package dev.ratelimit.servlet;

import dev.ratelimit.redis.RedisBackend;
import dev.ratelimit.redis.RedisClients;
import dev.ratelimit.redis.RedisUrl;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.spi.Command;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import org.redisson.api.RedissonClient;

/**
 * The Redis backend of a config file ({@code ratelimit.backend=redis}). Only loaded then, so
 * ratelimit-redis and Redisson are optional dependencies.
 */
final class RedisSupport {
  private RedisSupport() {}

  static boolean available() {
    try {
      ClassLoader loader = RedisSupport.class.getClassLoader();
      Class.forName("dev.ratelimit.redis.RedisBackend", false, loader);
      Class.forName("org.redisson.Redisson", false, loader);
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /** Throws when {@code url} is not a URL {@link #open} can connect to (see {@link RedisUrl}). */
  static void checkUrl(String url) {
    RedisUrl.parse(url);
  }

  /** The URL without its password, for messages (as {@link RedisUrl#redact}, without loading it). */
  static String redact(String url) {
    return url == null ? null : url.replaceFirst("//.*@", "//***@");
  }

  /**
   * A backend on a new Redisson client for {@code url}, which the backend shuts down when closed,
   * opened by {@link RedisClients#open(String, Duration, String)}: when Redis cannot be reached
   * now, a warning is logged and the limiter's failure mode decides until it can.
   *
   * @throws IllegalArgumentException naming {@code ratelimit.redis.url} when a Redis that answers
   *     refuses its user, password or database, or is a node of a Redis Cluster of several nodes
   */
  static Backend open(String url, String keyPrefix, Duration timeout) {
    RedissonClient client = RedisClients.open(url, timeout, "ratelimit.redis.url");
    try {
      RedisBackend backend = RedisBackend.builder(client).keyPrefix(keyPrefix).timeout(timeout)
          .loadScriptsEagerly(false).build();
      try {
        backend.warmUp(); // so that the first checks do not pay for loading the scripts
      } catch (RuntimeException e) {
        // Redis is down (RedisClients logged it): the scripts load on first use
      }
      return new OwningBackend(backend, client);
    } catch (RuntimeException | Error e) {
      client.shutdown();
      throw e;
    }
  }

  /**
   * A backend that shuts its Redisson client down when it is closed, and otherwise is its delegate:
   * every method of {@link Backend} is passed on (a default left in place would run instead of the
   * delegate's own: {@code isRemote} would turn the near-cache off, {@code isAsync} the timeout).
   */
  record OwningBackend(Backend delegate, RedissonClient client) implements Backend {
    @Override
    public <R> R execute(Command<R> command) {
      return delegate.execute(command);
    }

    @Override
    public <R> CompletionStage<R> executeAsync(Command<R> command) {
      return delegate.executeAsync(command);
    }

    @Override
    public boolean isAsync() {
      return delegate.isAsync();
    }

    @Override
    public boolean checksAcrossKeys() {
      return delegate.checksAcrossKeys();
    }

    @Override
    public boolean reserves() {
      return delegate.reserves();
    }

    @Override
    public boolean isRemote() {
      return delegate.isRemote();
    }

    @Override
    public void close() {
      try {
        delegate.close();
      } finally {
        client.shutdown();
      }
    }
  }
}

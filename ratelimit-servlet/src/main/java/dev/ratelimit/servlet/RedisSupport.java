package dev.ratelimit.servlet;

import dev.ratelimit.Decision;
import dev.ratelimit.KeyedPolicy;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.redis.RedisBackend;
import dev.ratelimit.redis.RedisClients;
import dev.ratelimit.redis.RedisUrl;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.spi.Evaluation;
import dev.ratelimit.spi.MultiEvaluation;
import java.time.Duration;
import java.util.List;
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
   * delegate's own: {@code isRemote} would turn the near-cache off, the async defaults would block
   * the caller past the limiter's timeout, the {@code evaluate} defaults would send no state).
   */
  record OwningBackend(Backend delegate, RedissonClient client) implements Backend {
    @Override
    public Decision check(String key, Policy policy, long cost, long nowMicros) {
      return delegate.check(key, policy, cost, nowMicros);
    }

    @Override
    public CompletionStage<Decision> checkAsync(String key, Policy policy, long cost, long nowMicros) {
      return delegate.checkAsync(key, policy, cost, nowMicros);
    }

    @Override
    public MultiDecision checkAll(String key, List<Policy> policies, long cost, long nowMicros) {
      return delegate.checkAll(key, policies, cost, nowMicros);
    }

    @Override
    public CompletionStage<MultiDecision> checkAllAsync(String key, List<Policy> policies, long cost,
        long nowMicros) {
      return delegate.checkAllAsync(key, policies, cost, nowMicros);
    }

    @Override
    public MultiDecision checkAll(List<KeyedPolicy> checks, long cost, long nowMicros) {
      return delegate.checkAll(checks, cost, nowMicros);
    }

    @Override
    public CompletionStage<MultiDecision> checkAllAsync(List<KeyedPolicy> checks, long cost, long nowMicros) {
      return delegate.checkAllAsync(checks, cost, nowMicros);
    }

    @Override
    public Evaluation evaluate(String key, Policy policy, long cost, long nowMicros) {
      return delegate.evaluate(key, policy, cost, nowMicros);
    }

    @Override
    public CompletionStage<Evaluation> evaluateAsync(String key, Policy policy, long cost, long nowMicros) {
      return delegate.evaluateAsync(key, policy, cost, nowMicros);
    }

    @Override
    public MultiEvaluation evaluateAll(String key, List<Policy> policies, long cost, long nowMicros) {
      return delegate.evaluateAll(key, policies, cost, nowMicros);
    }

    @Override
    public CompletionStage<MultiEvaluation> evaluateAllAsync(String key, List<Policy> policies, long cost,
        long nowMicros) {
      return delegate.evaluateAllAsync(key, policies, cost, nowMicros);
    }

    @Override
    public boolean isRemote() {
      return delegate.isRemote();
    }

    @Override
    public Decision inspect(String key, Policy policy, long nowMicros) {
      return delegate.inspect(key, policy, nowMicros);
    }

    @Override
    public Decision inspect(String key, Policy policy, long cost, long nowMicros) {
      return delegate.inspect(key, policy, cost, nowMicros);
    }

    @Override
    public void reset(String key, Policy policy, long nowMicros) {
      delegate.reset(key, policy, nowMicros);
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

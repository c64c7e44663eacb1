package dev.ratelimit.servlet;

import dev.ratelimit.Decision;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.redis.RedisBackend;
import dev.ratelimit.redis.RedisUrl;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.spi.Evaluation;
import dev.ratelimit.spi.MultiEvaluation;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.regex.Pattern;
import org.redisson.Redisson;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.api.redisnode.RedisNode;
import org.redisson.api.redisnode.RedisNodes;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/**
 * The Redis backend of a config file ({@code ratelimit.backend=redis}). Only loaded then, so
 * ratelimit-redis and Redisson are optional dependencies.
 */
final class RedisSupport {
  private static final System.Logger LOG = System.getLogger(RateLimitFilter.class.getName());
  /** Replies by which a reachable Redis refuses a client: credentials, rights, database. */
  private static final Pattern REFUSAL = Pattern.compile("WRONGPASS|NOAUTH|NOPERM|invalid password"
      + "|called without any password configured|AUTH, but no password is set|wrong number of arguments for 'auth'"
      + "|DB index is out of range|SELECT is not allowed in cluster mode");

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
   * A backend on a new Redisson client for {@code url}, which the backend shuts down when closed.
   * Connecting is lazy: when Redis cannot be reached now, a warning is logged and the limiter's
   * failure mode decides until it can.
   *
   * @throws IllegalArgumentException naming {@code ratelimit.redis.url} when a Redis that answers
   *     refuses its user, password or database
   */
  static Backend open(String url, String keyPrefix, Duration timeout) {
    RedisUrl parsed = RedisUrl.parse(url); // checked when the file was read
    int millis = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
    Config config = new Config();
    config.setLazyInitialization(true);
    // Redisson reads a user and password from the address itself
    config.useSingleServer()
        .setAddress(parsed.address())
        .setDatabase(parsed.database())
        .setTimeout(millis)
        .setConnectTimeout(millis)
        .setRetryAttempts(0);
    RedissonClient client = Redisson.create(config);
    try {
      RedisBackend backend;
      try {
        backend = RedisBackend.builder(client).keyPrefix(keyPrefix).timeout(timeout).build();
        if (isClusterNode(client)) {
          throw new IllegalArgumentException("ratelimit.redis.url: Redis at " + redact(url) + " is a node of a"
              + " Redis Cluster of several nodes, and a configuration file connects to one server: every key another node holds"
              + " would fail (MOVED) and be left to the failure mode. Build the limiter in code on a"
              + " RedissonClient configured for the cluster (useClusterServers) and give it to"
              + " RateLimitConfig.filterBuilder(limiter)");
        }
      } catch (IllegalArgumentException e) {
        throw e;
      } catch (RuntimeException e) {
        String refusal = refusal(e);
        if (refusal != null) { // Redis answered, and said no: the URL is wrong, not Redis down
          throw new IllegalArgumentException("ratelimit.redis.url: Redis at " + redact(url) + " refused the "
              + "connection (" + refusal + "); check the user, password (percent-encoded) and database in the URL",
              e);
        }
        LOG.log(System.Logger.Level.WARNING, "Redis at " + redact(url) + " cannot be reached now (" + e
            + "); until it can, the rate limiter's failure mode decides");
        backend = RedisBackend.builder(client).keyPrefix(keyPrefix).timeout(timeout)
            .loadScriptsEagerly(false).build();
      }
      return new OwningBackend(backend, client);
    } catch (RuntimeException | Error e) {
      client.shutdown();
      throw e;
    }
  }

  /**
   * Whether the server {@code client} reached is a node of a cluster whose slots are spread over
   * more than one node (a cluster of one node holds every key, and one connection serves it);
   * false when it cannot tell.
   */
  private static boolean isClusterNode(RedissonClient client) {
    try {
      if (!"1".equals(client.getRedisNodes(RedisNodes.SINGLE).getInstance().info(RedisNode.InfoSection.CLUSTER)
          .get("cluster_enabled"))) {
        return false;
      }
      String info = client.getScript(StringCodec.INSTANCE).eval(RScript.Mode.READ_ONLY,
          "return redis.call('CLUSTER', 'INFO')", RScript.ReturnType.VALUE);
      java.util.regex.Matcher size = java.util.regex.Pattern.compile("cluster_size:(\\d+)").matcher(info);
      return size.find() && Integer.parseInt(size.group(1)) > 1;
    } catch (RuntimeException e) {
      return false;
    }
  }

  /**
   * The reply by which a reachable Redis refused this client (wrong credentials, a user without the
   * rights, a database it does not have), or null when the failure was something else.
   */
  static String refusal(Throwable error) {
    for (Throwable e = error; e != null; e = e.getCause()) {
      String message = e.getMessage();
      if (message != null && REFUSAL.matcher(message).find()) {
        return message;
      }
    }
    return null;
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

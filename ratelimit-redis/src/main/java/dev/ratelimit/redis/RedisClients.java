package dev.ratelimit.redis;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.redisson.Redisson;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.api.options.OptionalOptions;
import org.redisson.api.redisnode.RedisNode;
import org.redisson.api.redisnode.RedisNodes;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/**
 * Opens a Redisson client for the limiter and checks it once, the same way wherever a module
 * builds its own client (the servlet filter's configuration file, the Spring Boot starter):
 *
 * <ul>
 *   <li>the client connects lazily, so that an application starts while Redis is down: when Redis
 *       cannot be reached now (refused, or no answer in time), a warning is logged and the client
 *       is returned, and the limiter's failure mode decides until Redis answers;</li>
 *   <li>a Redis that answers and refuses the client (a wrong user or password, none where one is
 *       needed, a user without the rights, a database it does not have) fails at once, with an
 *       {@link IllegalArgumentException} that names the setting to fix: left to run, every check
 *       would silently fall to the failure mode;</li>
 *   <li>a single-server configuration that reached a node of a Redis Cluster of several nodes
 *       fails too: every key that another node holds would fail ({@code MOVED});</li>
 *   <li>a client opened {@linkplain #open(String, Duration, String) from a URL} waits for a
 *       connection and for each reply at most the timeout given, and never retries.</li>
 * </ul>
 *
 * <pre>{@code
 * RedissonClient client = RedisClients.open("redis://:s3cret@cache:6379/0", Duration.ofMillis(200),
 *     "ratelimit.redis.url");                     // yours to shut down
 * RedisBackend backend = RedisBackend.builder(client).timeout(Duration.ofMillis(200)).build();
 * }</pre>
 */
public final class RedisClients {
  private static final System.Logger LOG = System.getLogger(RedisClients.class.getName());
  /** Replies by which a reachable Redis refuses a client: credentials, rights, database. */
  private static final Pattern REFUSAL = Pattern.compile("WRONGPASS|NOAUTH|NOPERM|invalid password"
      + "|called without any password configured|AUTH, but no password is set|wrong number of arguments for 'auth'"
      + "|DB index is out of range|SELECT is not allowed in cluster mode");
  private static final Pattern CLUSTER_SIZE = Pattern.compile("cluster_size:(\\d+)");

  private RedisClients() {}

  /**
   * A client for the one server {@code url} names ({@link RedisUrl}: its user, password and
   * database), whose connect timeout and reply timeout are both {@code timeout}, with no retries;
   * checked once as the class comment says (waiting at most twice the connect timeout and the
   * reply timeout together: four times {@code timeout}).
   *
   * @param property the setting {@code url} came from, named in messages, such as {@code
   *     ratelimit.redis.url}
   * @throws IllegalArgumentException naming {@code property} when {@code url} is not such a URL,
   *     when the Redis that answers refuses its user, password or database, or when it is a node
   *     of a Redis Cluster of several nodes; messages never show the password
   */
  public static RedissonClient open(String url, Duration timeout, String property) {
    Objects.requireNonNull(property, "property");
    requirePositive(timeout);
    RedisUrl parsed;
    try {
      parsed = RedisUrl.parse(url);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(property + ": " + e.getMessage(), e);
    }
    int millis = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
    Config config = new Config();
    // Redisson reads a user and password from the address itself
    config.useSingleServer()
        .setAddress(parsed.address())
        .setDatabase(parsed.database())
        .setTimeout(millis)
        .setConnectTimeout(millis)
        .setRetryAttempts(0);
    return open(config, timeout.multipliedBy(4), property + ": Redis at " + RedisUrl.redact(url),
        "check the user, password (percent-encoded) and database in the URL");
  }

  /**
   * A client of {@code config} (made lazy: {@link Config#setLazyInitialization(boolean)}), checked
   * once as the class comment says: one round trip ({@code EVAL "return 1"}, a command the limiter
   * needs the rights for) that may take at most {@code wait}.
   *
   * @param subject what a message starts with: the setting and the server, such as {@code
   *     "spring.data.redis.password: Redis at 127.0.0.1:6379"}
   * @param fix what a refused client's message ends with: what to check
   * @throws IllegalArgumentException {@code subject} followed by what Redis said and {@code fix},
   *     when Redis refuses the client; or when a single-server {@code config} reached a node of a
   *     Redis Cluster of several nodes. The client is shut down then.
   */
  public static RedissonClient open(Config config, Duration wait, String subject, String fix) {
    Objects.requireNonNull(subject, "subject");
    Objects.requireNonNull(fix, "fix");
    requirePositive(wait);
    config.setLazyInitialization(true);
    RedissonClient client = Redisson.create(config);
    try {
      Throwable failure = probe(client, wait);
      if (failure == null) {
        if (config.isSingleConfig()) {
          int nodes = clusterSize(client);
          if (nodes > 1) {
            throw new IllegalArgumentException(subject + " is a node of a Redis Cluster of " + nodes + " nodes,"
                + " and this configuration connects to one server: every key another node holds would fail"
                + " (MOVED) and be left to the failure mode. Connect to the cluster with a RedissonClient configured"
                + " for it (useClusterServers): in Spring Boot, spring.data.redis.cluster.nodes or a RedissonClient"
                + " bean; with the servlet filter's file, build the limiter in code and give it to"
                + " RateLimitConfig.filterBuilder(limiter)");
          }
        }
        return client;
      }
      String refusal = refusal(failure);
      if (refusal != null) { // Redis answered, and said no: the configuration is wrong, not Redis down
        throw new IllegalArgumentException(subject + " refused the connection (" + refusal + "); " + fix, failure);
      }
      LOG.log(System.Logger.Level.WARNING, subject + " cannot be reached now (" + failure
          + "); until it can, the rate limiter's failure mode decides");
      return client;
    } catch (RuntimeException | Error e) {
      client.shutdown();
      throw e;
    }
  }

  /**
   * The reply by which a reachable Redis refused a client (wrong credentials, a user without the
   * rights, a database it does not have) found in {@code error} or its causes, or null when the
   * failure was something else (such as Redis being down).
   */
  static String refusal(Throwable error) {
    String reply = null;
    for (Throwable e = error; e != null && e.getCause() != e; e = e.getCause()) {
      String message = e.getMessage();
      if (message != null && REFUSAL.matcher(message).find()) {
        reply = message; // the innermost: Redisson's wrappers repeat it after their own words
      }
    }
    if (reply == null) {
      return null;
    }
    int channel = reply.indexOf(". channel: "); // Redisson's connection details: not Redis's words
    return channel < 0 ? reply : reply.substring(0, channel + 1);
  }

  /** Null when Redis answered one round trip within {@code wait}; else what went wrong. */
  private static Throwable probe(RedissonClient client, Duration wait) {
    RScript script = client.getScript(OptionalOptions.defaults()
        .codec(StringCodec.INSTANCE)
        .retryAttempts(0)
        .timeout(wait));
    try {
      script.evalAsync(RScript.Mode.READ_WRITE, "return 1", RScript.ReturnType.LONG).toCompletableFuture()
          .get(wait.toNanos(), TimeUnit.NANOSECONDS);
      return null;
    } catch (ExecutionException e) {
      return e.getCause() != null ? e.getCause() : e;
    } catch (TimeoutException e) {
      return new TimeoutException("no answer in " + wait.toMillis() + " ms");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return e;
    } catch (RuntimeException e) {
      return e;
    }
  }

  /**
   * The number of nodes that hold slots, when the server {@code client} reached is a Cluster node
   * (a cluster of one node holds every key, and one connection serves it); 0 when it is not, or
   * when it cannot tell.
   */
  private static int clusterSize(RedissonClient client) {
    try {
      if (!"1".equals(client.getRedisNodes(RedisNodes.SINGLE).getInstance().info(RedisNode.InfoSection.CLUSTER)
          .get("cluster_enabled"))) {
        return 0;
      }
      String info = client.getScript(StringCodec.INSTANCE).eval(RScript.Mode.READ_ONLY,
          "return redis.call('CLUSTER', 'INFO')", RScript.ReturnType.VALUE);
      Matcher size = CLUSTER_SIZE.matcher(info);
      return size.find() ? Integer.parseInt(size.group(1)) : 0;
    } catch (RuntimeException e) {
      return 0;
    }
  }

  private static void requirePositive(Duration d) {
    if (d == null || d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException("the timeout must be positive, was " + d);
    }
  }
}

package dev.ratelimit.spring;

import java.util.List;
import java.util.Locale;
import org.redisson.config.BaseMasterSlaveServersConfig;
import org.redisson.config.ClusterServersConfig;
import org.redisson.config.Config;
import org.redisson.config.ReadMode;
import org.redisson.config.SentinelServersConfig;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslOptions;
import org.springframework.core.env.Environment;

/**
 * A Redisson configuration from Boot's {@link DataRedisConnectionDetails}, which {@code
 * spring.data.redis.*}, Testcontainers and Docker Compose service connections fill: Sentinel,
 * Cluster or one server, as Boot's own client would choose (Sentinel first, then Cluster); the
 * user and password (and the Sentinels' own); the database; TLS from the SSL bundle (or {@code
 * rediss://} in {@code spring.data.redis.url}). Only loaded when spring-boot-data-redis is on the
 * classpath.
 */
final class ConnectionDetailsRedisson implements RedisConnectionPlan.Source {
  /** Boot's own details, made from spring.data.redis.*: messages then name those properties. */
  private static final String FROM_PROPERTIES =
      "org.springframework.boot.data.redis.autoconfigure.PropertiesDataRedisConnectionDetails";

  /** How often our own Cluster client reads the cluster's slots, in milliseconds. */
  static final int CLUSTER_SCAN_INTERVAL_MS = 1_000;

  private final ObjectProvider<DataRedisConnectionDetails> details;
  private final Environment environment;

  ConnectionDetailsRedisson(ObjectProvider<DataRedisConnectionDetails> details, Environment environment) {
    this.details = details;
    this.environment = environment;
  }

  @Override
  public RedisConnectionPlan plan(int timeoutMillis, int connectTimeoutMillis) {
    DataRedisConnectionDetails d = details.getIfUnique();
    if (d == null) {
      return null;
    }
    boolean fromProperties = d.getClass().getName().equals(FROM_PROPERTIES);
    String url = environment.getProperty("spring.data.redis.url", "");
    SslBundle ssl = d.getSslBundle();
    // as Boot's Lettuce configuration: TLS when SSL is enabled, or the URL asks for it
    boolean tls = ssl != null || (fromProperties && url.toLowerCase(Locale.ROOT).startsWith("rediss:"));
    String scheme = tls ? "rediss://" : "redis://";
    Config config = new Config();
    // on the Config: Redisson 4 deprecates them on the server settings (and says so in the log)
    if (hasText(d.getUsername())) {
      config.setUsername(d.getUsername());
    }
    if (hasText(d.getPassword())) {
      config.setPassword(d.getPassword());
    }
    if (ssl != null) {
      config.setSslTrustManagerFactory(ssl.getManagers().getTrustManagerFactory());
      config.setSslKeyManagerFactory(ssl.getManagers().getKeyManagerFactory());
      SslOptions options = ssl.getOptions();
      if (options != null && options.getCiphers() != null) {
        config.setSslCiphers(options.getCiphers());
      }
      if (options != null && options.getEnabledProtocols() != null) {
        config.setSslProtocols(options.getEnabledProtocols());
      }
    }
    String source = fromProperties ? "spring.data.redis" : "the Redis connection details ("
        + d.getClass().getSimpleName() + ")";
    String credentials = fromProperties
        ? "spring.data.redis.username and spring.data.redis.password (or the user and password in spring.data.redis.url)"
        : "the user and password of the Redis service connection";
    if (d.getSentinel() != null) {
      DataRedisConnectionDetails.Sentinel sentinel = d.getSentinel();
      SentinelServersConfig servers = config.useSentinelServers()
          .setMasterName(sentinel.getMaster())
          .setDatabase(sentinel.getDatabase())
          // Boot's client takes a single Sentinel; Redisson would refuse fewer than two at start-up
          .setCheckSentinelsList(false);
      for (DataRedisConnectionDetails.Node node : sentinel.getNodes()) {
        servers.addSentinelAddress(scheme + address(node));
      }
      if (hasText(sentinel.getUsername())) {
        servers.setSentinelUsername(sentinel.getUsername());
      }
      if (hasText(sentinel.getPassword())) {
        servers.setSentinelPassword(sentinel.getPassword());
      }
      settings(servers, timeoutMillis, connectTimeoutMillis);
      return new RedisConnectionPlan(config, source + ": Redis Sentinel master '" + sentinel.getMaster() + "' at "
          + addresses(sentinel.getNodes()), "check " + credentials + " for the master and replicas, "
          + (fromProperties ? "spring.data.redis.sentinel.username and spring.data.redis.sentinel.password"
              : "the Sentinels' user and password") + " for the Sentinels, and the database");
    }
    if (d.getCluster() != null) {
      // Redisson's default scan is every 5 s: until it runs, the checks of a slot that moved (a
      // failover, resharding, a node added) to a node it does not know yet go to the failure mode
      ClusterServersConfig servers = config.useClusterServers().setScanInterval(CLUSTER_SCAN_INTERVAL_MS);
      for (DataRedisConnectionDetails.Node node : d.getCluster().getNodes()) {
        servers.addNodeAddress(scheme + address(node));
      }
      settings(servers, timeoutMillis, connectTimeoutMillis);
      return new RedisConnectionPlan(config, source + ": Redis Cluster at " + addresses(d.getCluster().getNodes()),
          "check " + credentials);
    }
    if (d.getMasterReplica() != null) {
      throw new IllegalStateException("spring.data.redis.masterreplica.nodes: the rate limiter's Redisson client"
          + " does not take a static master/replica list; set ratelimit.redis.url to the master, or give the"
          + " application a RedissonClient bean");
    }
    DataRedisConnectionDetails.Standalone standalone = d.getStandalone();
    config.useSingleServer()
        .setAddress(scheme + address(new DataRedisConnectionDetails.Node(standalone.getHost(), standalone.getPort())))
        .setDatabase(standalone.getDatabase())
        .setTimeout(timeoutMillis)
        .setConnectTimeout(connectTimeoutMillis)
        .setRetryAttempts(0);
    return new RedisConnectionPlan(config, source + ": Redis at " + address(
        new DataRedisConnectionDetails.Node(standalone.getHost(), standalone.getPort())),
        "check " + credentials + (fromProperties ? " and spring.data.redis.database" : " and the database"));
  }

  /** The limiter's settings on a Sentinel's or a Cluster's servers: masters only, its timeouts, no retries. */
  private static void settings(BaseMasterSlaveServersConfig<?> servers, int timeoutMillis, int connectTimeoutMillis) {
    servers.setReadMode(ReadMode.MASTER) // every script writes: no connections to replicas
        .setTimeout(timeoutMillis)
        .setConnectTimeout(connectTimeoutMillis)
        .setRetryAttempts(0);
  }

  private static String address(DataRedisConnectionDetails.Node node) {
    String host = node.host();
    return (host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host) + ":" + node.port();
  }

  private static String addresses(List<DataRedisConnectionDetails.Node> nodes) {
    return String.join(", ", nodes.stream().map(ConnectionDetailsRedisson::address).toList());
  }

  private static boolean hasText(String s) {
    return s != null && !s.isEmpty();
  }
}

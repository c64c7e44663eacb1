package dev.ratelimit.spring;

import org.redisson.config.Config;

/**
 * How the starter's own Redisson client connects: the configuration, and the words of a message
 * when Redis refuses it (see {@link dev.ratelimit.redis.RedisClients#open(Config,
 * java.time.Duration, String, String)}).
 *
 * @param config Redisson's configuration: servers, credentials, TLS, timeouts
 * @param subject what a message starts with: the settings and the server
 * @param fix what a refused client's message ends with: the settings to check
 */
record RedisConnectionPlan(Config config, String subject, String fix) {

  /** Makes a plan from Boot's Redis settings, when the application has them. */
  interface Source {
    /**
     * The plan, or null when there are no Boot connection details to make it from.
     *
     * @param timeoutMillis how long a reply may take
     * @param connectTimeoutMillis how long connecting may take
     */
    RedisConnectionPlan plan(int timeoutMillis, int connectTimeoutMillis);
  }
}

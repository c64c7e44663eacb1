package dev.ratelimit.redis;

/**
 * The whole contract suite on one Redis node with the limiter's near-cache off: every answer, the
 * repeated denials too, comes from the Lua scripts, none from the Java twin the near-cache runs.
 */
class RedisContractWithoutNearCacheTest extends RedisContractTest {
  @Override
  protected Boolean nearCache() {
    return false;
  }
}

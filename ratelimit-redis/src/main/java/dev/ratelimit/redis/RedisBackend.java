package dev.ratelimit.redis;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.Require;
import dev.ratelimit.spi.Backend;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.api.options.OptionalOptions;
import org.redisson.client.RedisNoScriptException;
import org.redisson.client.codec.StringCodec;

/**
 * The Redis backend: every check is one atomic Lua script, run with {@code EVALSHA} through
 * Redisson, so that any number of application instances share one limit without races.
 *
 * <pre>{@code
 * RedissonClient redisson = Redisson.create(config);          // yours; the backend never closes it
 * RateLimiter limiter = RateLimiter.builder()
 *     .backend(RedisBackend.builder(redisson).keyPrefix("rl").timeout(Duration.ofMillis(200)).build())
 *     .build();
 * }</pre>
 *
 * <ul>
 *   <li>One script per algorithm and one for {@link #checkAll}, loaded once on every node; after a
 *       {@code NOSCRIPT} (restart, failover, {@code SCRIPT FLUSH}) the script is loaded again and
 *       the check retried, once: a NOSCRIPT check never ran, so nothing is counted twice.</li>
 *   <li>A script is never resent after a response timeout (Redisson would resend it by default,
 *       and count it twice): each call has no retries and the backend's own timeout. A timed-out
 *       check is an exception for the limiter's failure mode, never a denial.</li>
 *   <li>Keys are {@code prefix:{key}:policy:algorithm[:suffix]}; all keys of a check share the
 *       hash tag, so Redis Cluster works; every key has a TTL that ends when its state stops
 *       mattering; denied checks write nothing.</li>
 *   <li>Time comes from the limiter's clock ({@code now} in every call): keep instances on NTP.</li>
 * </ul>
 */
public final class RedisBackend implements Backend {
  /** The default key prefix. */
  public static final String DEFAULT_PREFIX = "rl";
  /** The default per-call timeout. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofMillis(200);

  private final RedissonClient client;
  private final RScript script;
  private final RedisKeys keys;
  private final Map<Algorithm, Lua> check = new EnumMap<>(Algorithm.class);
  private final Lua checkAll;

  private RedisBackend(Builder builder) {
    this.client = builder.client;
    this.script = client.getScript(OptionalOptions.defaults()
        .codec(StringCodec.INSTANCE)
        .retryAttempts(0)
        .timeout(builder.timeout));
    this.keys = new RedisKeys(builder.keyPrefix);
    Scripts scripts = new Scripts();
    for (Algorithm algorithm : Algorithm.values()) {
      check.put(algorithm, new Lua(scripts.check(algorithm)));
    }
    this.checkAll = new Lua(scripts.checkAll());
    if (builder.loadScripts) {
      check.values().stream().distinct().forEach(this::load);
      load(checkAll);
    }
  }

  /** A backend with the default prefix ({@value #DEFAULT_PREFIX}) and timeout (200 ms). */
  public static RedisBackend create(RedissonClient client) {
    return builder(client).build();
  }

  /** A builder for a backend on {@code client}. */
  public static Builder builder(RedissonClient client) {
    return new Builder(client);
  }

  @Override
  public Decision check(String key, Policy policy, long cost, long nowMicros) {
    List<Object> reply = eval(check.get(policy.algorithm()), keys.forCheck(key, policy, nowMicros),
        args(policy, nowMicros, cost, true));
    return decode(policy, reply, 0);
  }

  @Override
  public CompletionStage<Decision> checkAsync(String key, Policy policy, long cost, long nowMicros) {
    return evalAsync(check.get(policy.algorithm()), keys.forCheck(key, policy, nowMicros),
        args(policy, nowMicros, cost, true))
        .thenApply(reply -> decode(policy, reply, 0));
  }

  @Override
  public MultiDecision checkAll(String key, List<Policy> policies, long cost, long nowMicros) {
    List<Object> allKeys = new ArrayList<>();
    Object[] args = new Object[3 + 5 * policies.size()];
    args[0] = nowMicros;
    args[1] = cost;
    args[2] = policies.size();
    for (int i = 0; i < policies.size(); i++) {
      Policy policy = policies.get(i);
      List<Object> policyKeys = keys.forCheck(key, policy, nowMicros);
      allKeys.addAll(policyKeys);
      int a = 3 + 5 * i;
      args[a] = RedisKeys.scriptName(policy.algorithm());
      args[a + 1] = policy.windowMicros();
      args[a + 2] = policy.limit();
      args[a + 3] = policy.burst();
      args[a + 4] = policyKeys.size();
    }
    List<Object> reply = eval(checkAll, allKeys, args);
    List<Decision> decisions = new ArrayList<>(policies.size());
    for (int i = 0; i < policies.size(); i++) {
      decisions.add(decode(policies.get(i), reply, 1 + 5 * i));
    }
    return new MultiDecision(number(reply, 0) == 1, decisions);
  }

  @Override
  public Decision inspect(String key, Policy policy, long nowMicros) {
    List<Object> reply = eval(check.get(policy.algorithm()), keys.forCheck(key, policy, nowMicros),
        args(policy, nowMicros, 1, false));
    return decode(policy, reply, 0);
  }

  @Override
  public void reset(String key, Policy policy, long nowMicros) {
    client.getKeys().delete(keys.forReset(key, policy, nowMicros).toArray(String[]::new));
  }

  /** Does nothing: the {@link RedissonClient} belongs to the caller. */
  @Override
  public void close() {}

  private static Object[] args(Policy policy, long nowMicros, long cost, boolean apply) {
    return new Object[] {RedisKeys.scriptName(policy.algorithm()), nowMicros, cost,
        policy.windowMicros(), policy.limit(), policy.burst(), apply ? "1" : "0"};
  }

  private static Decision decode(Policy policy, List<Object> reply, int at) {
    long remaining = number(reply, at + 1);
    long retryAfter = number(reply, at + 2);
    long resetAfter = number(reply, at + 3);
    if (number(reply, at) == 1) {
      return Decision.allowed(policy, remaining, resetAfter, number(reply, at + 4));
    }
    return Decision.denied(policy, remaining, retryAfter, resetAfter);
  }

  private static long number(List<Object> reply, int index) {
    return (Long) reply.get(index);
  }

  private List<Object> eval(Lua lua, List<Object> scriptKeys, Object[] args) {
    try {
      return script.evalSha(RScript.Mode.READ_WRITE, lua.sha, RScript.ReturnType.LIST, scriptKeys, args);
    } catch (RuntimeException e) {
      if (!isNoScript(e)) {
        throw e;
      }
      load(lua); // the script never ran: running it now counts the check once
      return script.evalSha(RScript.Mode.READ_WRITE, lua.sha, RScript.ReturnType.LIST, scriptKeys, args);
    }
  }

  private CompletionStage<List<Object>> evalAsync(Lua lua, List<Object> scriptKeys, Object[] args) {
    CompletionStage<List<Object>> first =
        script.evalShaAsync(RScript.Mode.READ_WRITE, lua.sha, RScript.ReturnType.LIST, scriptKeys, args);
    return first.handle((reply, error) -> {
      if (error == null) {
        return CompletableFuture.completedStage(reply);
      }
      if (!isNoScript(error)) {
        return CompletableFuture.<List<Object>>failedStage(error);
      }
      return script.scriptLoadAsync(lua.text).thenCompose(sha -> script.<List<Object>>evalShaAsync(
          RScript.Mode.READ_WRITE, lua.sha, RScript.ReturnType.LIST, scriptKeys, args));
    }).thenCompose(stage -> stage);
  }

  private void load(Lua lua) {
    String sha = script.scriptLoad(lua.text);
    Require.state(sha.equalsIgnoreCase(lua.sha), "Redis computed SHA %s for a script whose SHA-1 is %s", sha, lua.sha);
  }

  private static boolean isNoScript(Throwable error) {
    for (Throwable e = error; e != null; e = e.getCause()) {
      if (e instanceof RedisNoScriptException
          || (e.getMessage() != null && e.getMessage().startsWith("NOSCRIPT"))) {
        return true;
      }
    }
    return false;
  }

  /** A script's text and its SHA-1, which is what Redis names it by. */
  private record Lua(String text, String sha) {
    Lua(String text) {
      this(text, sha1(text));
    }

    private static String sha1(String text) {
      try {
        return HexFormat.of().formatHex(
            MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException("SHA-1 is required of every JVM", e);
      }
    }
  }

  /** Configures a {@link RedisBackend}. */
  public static final class Builder {
    private final RedissonClient client;
    private String keyPrefix = DEFAULT_PREFIX;
    private Duration timeout = DEFAULT_TIMEOUT;
    private boolean loadScripts = true;

    private Builder(RedissonClient client) {
      this.client = Objects.requireNonNull(client, "client");
    }

    /**
     * The first part of every key, default {@value #DEFAULT_PREFIX}; not empty, and without
     * {@code { } :} or white space, so that it never shifts the hash tag.
     */
    public Builder keyPrefix(String keyPrefix) {
      Require.argument(keyPrefix != null && !keyPrefix.isEmpty() && RedisKeys.escape(keyPrefix).equals(keyPrefix),
          "keyPrefix must be non-empty without %% { } : # or white space, was '%s'", keyPrefix);
      this.keyPrefix = keyPrefix;
      return this;
    }

    /**
     * How long one call may wait for Redis, default 200 ms. A call that times out is a backend
     * error for the limiter's failure mode; it is never resent.
     */
    public Builder timeout(Duration timeout) {
      Require.argument(timeout != null && !timeout.isNegative() && !timeout.isZero(),
          "timeout must be positive, was %s", timeout);
      this.timeout = timeout;
      return this;
    }

    /**
     * Whether to load the scripts when the backend is built (default true); when false they are
     * loaded on first use, so a backend can be built while Redis is down.
     */
    public Builder loadScriptsEagerly(boolean loadScripts) {
      this.loadScripts = loadScripts;
      return this;
    }

    /** A new backend. */
    public RedisBackend build() {
      return new RedisBackend(this);
    }
  }
}

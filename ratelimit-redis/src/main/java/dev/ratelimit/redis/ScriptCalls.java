package dev.ratelimit.redis;

import dev.ratelimit.Require;
import dev.ratelimit.spi.NotRoutedException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.redisson.api.BatchOptions;
import org.redisson.api.RBatch;
import org.redisson.api.RFuture;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.api.options.OptionalOptions;
import org.redisson.client.RedisException;
import org.redisson.client.RedisNoScriptException;
import org.redisson.client.RedisNodeNotFoundException;
import org.redisson.client.RedisTryAgainException;
import org.redisson.client.codec.StringCodec;

/**
 * How the Redis backend's scripts go out: {@code EVALSHA}, sent once and never retried by the
 * client (a check sent twice would count twice); after {@code NOSCRIPT} the script is loaded and
 * run again, since it never ran; with {@code waitForReplicas}, a call that may write is followed by
 * {@code WAIT}; a call that never ran because its slot moves fails as {@link NotRoutedException}.
 */
final class ScriptCalls {
  private final RedissonClient client;
  private final RScript script;
  private final Duration timeout;
  /** How many replicas must acknowledge a consuming call's writes (Redis WAIT); 0: none, no WAIT. */
  private final int waitReplicas;
  private final Duration waitTimeout;
  private final Lua checkAll;
  private final Lua checkBatch;

  ScriptCalls(RedissonClient client, Duration timeout, int waitReplicas, Duration waitTimeout,
      Lua checkAll, Lua checkBatch) {
    this.client = client;
    this.timeout = timeout;
    this.waitReplicas = waitReplicas;
    this.waitTimeout = waitTimeout;
    this.checkAll = checkAll;
    this.checkBatch = checkBatch;
    this.script = client.getScript(OptionalOptions.defaults()
        .codec(StringCodec.INSTANCE)
        .retryAttempts(0)
        .timeout(timeout));
  }

  List<Object> eval(Lua lua, List<Object> scriptKeys, Object[] args) {
    if (waitReplicas > 0) { // the script and WAIT go out together as a batch: asynchronous only
      try {
        return evalAsync(lua, scriptKeys, args).toCompletableFuture().join();
      } catch (CompletionException e) {
        if (e.getCause() instanceof RuntimeException cause) {
          throw cause;
        }
        throw e;
      }
    }
    try {
      try {
        return script.evalSha(RScript.Mode.READ_WRITE, lua.sha(), RScript.ReturnType.LIST, scriptKeys, args);
      } catch (RuntimeException e) {
        if (!isNoScript(e)) {
          throw e;
        }
        load(lua); // the script never ran: running it now counts the check once
        return script.evalSha(RScript.Mode.READ_WRITE, lua.sha(), RScript.ReturnType.LIST, scriptKeys, args);
      }
    } catch (RuntimeException e) {
      Throwable routed = routed(e);
      throw routed instanceof RuntimeException r ? r : e;
    }
  }

  CompletionStage<List<Object>> evalAsync(Lua lua, List<Object> scriptKeys, Object[] args) {
    return evalAsync(lua, RScript.ReturnType.LIST, scriptKeys, args);
  }

  /** EVALSHA of {@code lua}, its reply decoded as {@code type} says; loads it and runs it again after NOSCRIPT. */
  <T> CompletionStage<T> evalAsync(Lua lua, RScript.ReturnType type, List<Object> scriptKeys, Object[] args) {
    CompletableFuture<T> reply = new CompletableFuture<>();
    this.<T>evalShaOnce(lua, type, scriptKeys, args)
        .whenComplete((answer, error) -> {
          if (error == null) {
            reply.complete(answer);
          } else if (!isNoScript(error)) {
            reply.completeExceptionally(routed(error));
          } else { // the script never ran: running it now counts the check once
            try {
              script.scriptLoadAsync(lua.text()).thenCompose(sha -> this.<T>evalShaOnce(lua, type, scriptKeys, args))
                  .whenComplete((again, e) -> {
                    if (e == null) {
                      reply.complete(again);
                    } else {
                      reply.completeExceptionally(routed(e));
                    }
                  });
            } catch (RuntimeException e) { // thrown, not failed (a client shutting down): still an answer,
              reply.completeExceptionally(e); // or the call, and its batch lane's place, would wait forever
            }
          }
        });
    return reply;
  }

  /**
   * One EVALSHA, sent once. With {@link RedisBackend.Builder#waitForReplicas waitForReplicas}, a call that may
   * write goes out with {@code WAIT n timeout} right behind it on the same connection (a Redisson
   * batch synced to replicas), and fails when fewer than {@code n} replicas acknowledged its writes
   * in time: the failure mode decides it, as a check whose admission a failover could lose.
   */
  private <T> CompletionStage<T> evalShaOnce(Lua lua, RScript.ReturnType type, List<Object> scriptKeys, Object[] args) {
    if (waitReplicas == 0 || !consumes(lua, args)) {
      return script.evalShaAsync(RScript.Mode.READ_WRITE, lua.sha(), type, scriptKeys, args);
    }
    RBatch batch = client.createBatch(BatchOptions.defaults()
        .sync(waitReplicas, waitTimeout)
        .retryAttempts(0)
        .responseTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS));
    RFuture<T> answer = batch.getScript(StringCodec.INSTANCE)
        .evalShaAsync(RScript.Mode.READ_WRITE, lua.sha(), type, scriptKeys, args);
    return batch.executeAsync().thenCompose(result -> {
      if (result.getSyncedSlaves() < waitReplicas) {
        return CompletableFuture.<T>failedFuture(new RedisException("the check ran on the master, but "
            + result.getSyncedSlaves() + " of the " + waitReplicas + " replicas it waits for acknowledged its writes"
            + " within " + waitTimeout.toMillis() + " ms (waitForReplicas): a failover now could lose them"));
      }
      return answer;
    });
  }

  /**
   * Whether a call may write: every call but a single check run as an inspection (check.lua's
   * seven arguments, apply "0" last); reservations and settles always write.
   */
  private boolean consumes(Lua lua, Object[] args) {
    boolean inspection = lua != checkAll && lua != checkBatch && args.length == 7 && "0".equals(args[6]);
    return !inspection;
  }

  void load(Lua lua) {
    String sha = script.scriptLoad(lua.text());
    Require.state(sha.equalsIgnoreCase(lua.sha()), "Redis computed SHA %s for a script whose SHA-1 is %s", sha, lua.sha());
  }

  /**
   * {@code error}, or a {@link NotRoutedException} when the call never ran because its slot is
   * moving: Redisson did not send it because no node it knows serves the slot now (Redis answered
   * {@code MOVED} or {@code ASK}, which run nothing, naming a node the client has not discovered
   * yet, as after a failover, a slot moved or a node added, until its next scan of the cluster,
   * Redisson's {@code scanInterval}); or Redis refused it with {@code TRYAGAIN} (its keys are split
   * between two nodes mid-migration). The failure mode decides such a check, and the limiter's
   * circuit stays closed for the keys of every other slot.
   */
  private static Throwable routed(Throwable error) {
    for (Throwable e = error; e != null && e.getCause() != e; e = e.getCause()) {
      if (e instanceof RedisNodeNotFoundException) {
        return new NotRoutedException("the check never ran: no node the Redis client knows serves its hash slot"
            + " now (a failover, a slot moved, a node added); the client learns the new node at its next scan"
            + " of the cluster", error);
      }
      if (e instanceof RedisTryAgainException) {
        return new NotRoutedException("the check never ran: its keys are split between two nodes while their"
            + " hash slot migrates (TRYAGAIN)", error);
      }
    }
    return error;
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
}

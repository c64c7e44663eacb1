package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Decision;
import dev.ratelimit.FailureMode;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.tck.redis.RedisReplyException;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.redisson.api.RedissonClient;
import org.redisson.client.RedisBusyException;
import org.redisson.client.RedisOutOfMemoryException;

/**
 * A Redis that answers with an error (out of memory, busy with a script) is a backend error like
 * any other: the failure mode decides, the listener hears of it, and nothing is read as "quota 0".
 * On a server of its own, since it changes the server's configuration and blocks it.
 */
class RedisErrorRepliesTest {
  private static RedisServer server;
  private static RedissonClient client;

  private final Policy policy = Policy.of(10, Duration.ofMinutes(1)).withName("api");
  private final Errors errors = new Errors();

  @BeforeAll
  static void startServer() {
    server = RedisServer.start();
    client = RedisOutageTest.client(server.url());
  }

  @AfterAll
  static void stopServer() {
    client.shutdown();
    server.close();
  }

  private RateLimiter limiter() {
    return RateLimiter.builder()
        .backend(RedisBackend.builder(client).keyPrefix(Clients.uniquePrefix())
            .timeout(Duration.ofMillis(500)).build())
        .timeout(Duration.ofSeconds(1))
        .failureMode(FailureMode.FAIL_CLOSED)
        .circuitBreaker(0, null)
        .listener(errors)
        .build();
  }

  private static final class Errors implements RateLimitListener {
    final List<Throwable> list = new CopyOnWriteArrayList<>();
    final List<Outcome> outcomes = new CopyOnWriteArrayList<>();

    @Override
    public void onBackendError(Throwable error) {
      list.add(error);
    }

    @Override
    public void onDecision(Policy policy, Outcome outcome) {
      outcomes.add(outcome);
    }
  }

  @Test
  void outOfMemoryIsABackendErrorForTheFailureMode() {
    try (RateLimiter limiter = limiter()) {
      assertThat(limiter.check("before", policy).remaining()).isEqualTo(9);
      server.command("CONFIG", "SET", "maxmemory", "1");
      Decision d;
      try {
        d = limiter.check("fresh", policy); // allowed, so it writes: OOM
      } finally {
        server.command("CONFIG", "SET", "maxmemory", "0");
      }
      assertThat(d.allowed()).isFalse();
      assertThat(d.isDegraded()).as("FAIL_CLOSED decided, not a denial by Redis").isTrue();
      assertThat(errors.list).singleElement().satisfies(e -> assertThat(e)
          .isInstanceOf(RedisOutOfMemoryException.class).hasMessageContaining("maxmemory"));
      assertThat(errors.outcomes).containsExactly(RateLimitListener.Outcome.ALLOWED,
          RateLimitListener.Outcome.FAILURE_DENIED);
      assertThat(limiter.check("fresh", policy).remaining()).as("the OOM check consumed nothing").isEqualTo(9);
    }
  }

  @Test
  @Timeout(30)
  void busyIsABackendErrorForTheFailureMode() throws Exception {
    try (RateLimiter limiter = limiter()) {
      assertThat(limiter.check("k", policy).remaining()).isEqualTo(9);
      server.command("CONFIG", "SET", "lua-time-limit", "100"); // busy-reply-threshold since 7.0
      CompletableFuture<Object> busyScript = CompletableFuture.supplyAsync(() -> {
        try {
          return server.command("EVAL", "while true do end", "0");
        } catch (RuntimeException e) {
          return e; // SCRIPT KILL ends it with an error reply
        }
      });
      Decision d;
      try {
        awaitBusy();
        d = limiter.check("k", policy);
      } finally {
        killScript();
      }
      assertThat(busyScript.get(10, TimeUnit.SECONDS)).isInstanceOf(RedisReplyException.class);
      assertThat(d.allowed()).isFalse();
      assertThat(d.isDegraded()).isTrue();
      assertThat(errors.list).singleElement().satisfies(e -> assertThat(e).isInstanceOf(RedisBusyException.class));
      assertThat(limiter.check("k", policy).remaining()).as("served again, nothing consumed").isEqualTo(8);
    }
  }

  /** Waits (at most 10 s) until the server answers BUSY. */
  private static void awaitBusy() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      try {
        server.command("EXISTS", "probe");
      } catch (RedisReplyException e) {
        if (e.getMessage().contains("BUSY")) {
          return;
        }
        throw e;
      }
      Thread.sleep(20);
    }
    throw new AssertionError("the server never answered BUSY");
  }

  /** Kills the busy script, retrying while the kill itself is refused (at most 10 s). */
  private static void killScript() throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      try {
        server.command("SCRIPT", "KILL");
        return;
      } catch (RedisReplyException e) {
        if (e.getMessage().contains("NOTBUSY")) {
          return;
        }
        if (System.nanoTime() > deadline) {
          throw e;
        }
      }
      Thread.sleep(20);
    }
  }
}

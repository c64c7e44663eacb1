package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.Decision;
import dev.ratelimit.ManualClock;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimiter;
import dev.ratelimit.Reservation;
import dev.ratelimit.tck.redis.RedisServer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.redisson.api.RedissonClient;

/**
 * Reserves and settles batch as checks do: queued behind calls in flight while the server sleeps,
 * they go out as one reservation_batch.lua call, and each is decided as it would have been alone,
 * in the order it was made. On a server of its own (it stalls it).
 */
class RedisReservationBatchingTest {
  private static RedisServer server;
  private static RedissonClient client;

  @BeforeAll
  static void startServer() {
    server = RedisServer.start();
    client = Clients.single(server.url());
  }

  @AfterAll
  static void stopServer() {
    client.shutdown();
    server.close();
  }

  /** Puts the server to sleep for {@code seconds} (DEBUG SLEEP, on the test's own connection). */
  private static CompletableFuture<Object> stall(String seconds) throws InterruptedException {
    CompletableFuture<Object> stall = CompletableFuture.supplyAsync(() -> server.command("DEBUG", "SLEEP", seconds));
    Thread.sleep(200); // let it start
    assertThat(stall).as("the server is asleep").isNotDone();
    return stall;
  }

  @Test
  @Timeout(60)
  void reservesAndSettlesThatWaitGoTogetherAndDecideAsAlone() throws Exception {
    RedisBackend backend = RedisBackend.builder(client).keyPrefix(Clients.uniquePrefix())
        .timeout(Duration.ofSeconds(10)).build();
    ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
    // a fixed window gives back exactly whatever the order of the settles (GCRA may give back less
    // when reservations made after one are still out, and the two settles sent alone may swap)
    Policy p = Policy.of(10, Duration.ofHours(1)).withAlgorithm(dev.ratelimit.Algorithm.FIXED_WINDOW);
    try (RateLimiter limiter = RateLimiter.builder().backend(backend).clock(clock).timeout(Duration.ofSeconds(20))
        .nearCache(false).build()) {
      CompletableFuture<Object> stall = stall("1.5");
      List<CompletableFuture<Reservation>> made = new ArrayList<>();
      for (int i = 0; i < 12; i++) {
        made.add(limiter.reserveAsync("k", p, 1).toCompletableFuture());
      }
      stall.get(10, TimeUnit.SECONDS);
      List<Long> remaining = new ArrayList<>();
      List<Reservation> allowed = new ArrayList<>();
      for (CompletableFuture<Reservation> f : made) {
        Reservation r = f.get(10, TimeUnit.SECONDS);
        remaining.add(r.allowed() ? r.decision().remaining() : -9);
        if (r.allowed()) {
          allowed.add(r);
        }
      }
      // the two sent at once, alone, may reach Redis in either order; the batch keeps the order made
      assertThat(remaining.subList(0, 2)).containsExactlyInAnyOrder(9L, 8L);
      assertThat(remaining.subList(2, 12)).as("as alone: 10 taken, then two refusals")
          .containsExactly(7L, 6L, 5L, 4L, 3L, 2L, 1L, 0L, -9L, -9L);
      assertThat(backend.reservationBatchesSent()).as("those that waited went as a batch").isPositive();
      long batches = backend.reservationBatchesSent();

      stall = stall("1.5");
      List<CompletableFuture<Void>> settles = new ArrayList<>();
      for (int i = 0; i < allowed.size(); i++) {
        Reservation r = allowed.get(i);
        settles.add((i % 2 == 0 ? r.cancelAsync() : r.commitAsync(1)).toCompletableFuture());
      }
      stall.get(10, TimeUnit.SECONDS);
      for (CompletableFuture<Void> f : settles) {
        f.get(10, TimeUnit.SECONDS);
      }
      assertThat(backend.reservationBatchesSent()).as("the settles too").isGreaterThan(batches);
      assertThat(limiter.failedSettles()).isZero();
      Decision now = limiter.inspect("k", p);
      assertThat(now.remaining()).as("five cancelled, five committed at 1").isEqualTo(5);
    }
  }
}

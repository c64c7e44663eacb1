package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.redisson.client.RedisException;
import org.redisson.client.RedisTimeoutException;

/**
 * The one lane of a server after a batch fails: a CROSSSLOT refusal (nothing ran) sends its checks
 * again by slot; any other failure, even one whose message names a key spelt "CROSSSLOT", fails them
 * (they may have run: sending them again could count them twice).
 */
class DispatcherCrossSlotTest {
  /** Holds the first single check; answers the batch with {@code batchFailure}; answers later singles at once. */
  private static final class Sender implements Dispatcher.Sender {
    final CompletableFuture<List<Object>> first = new CompletableFuture<>();
    final List<Dispatcher.Check> singles = new ArrayList<>();
    final RuntimeException batchFailure;
    /** When set, the batch's reply: the test fails it when it chooses. */
    CompletableFuture<String> heldBatch;

    Sender(RuntimeException batchFailure) {
      this.batchFailure = batchFailure;
    }

    @Override
    public synchronized CompletionStage<List<Object>> one(Dispatcher.Check check) {
      singles.add(check);
      return singles.size() == 1 ? first : CompletableFuture.completedFuture(List.of(1L));
    }

    @Override
    public CompletionStage<String> batch(List<Dispatcher.Check> checks) {
      return heldBatch != null ? heldBatch : CompletableFuture.failedFuture(batchFailure);
    }
  }

  private static Dispatcher.Check check(String key) {
    return new Dispatcher.Check(null, List.of("{" + key + "}:p"), new Object[0],
        System.nanoTime() + TimeUnit.SECONDS.toNanos(10), new CompletableFuture<>());
  }

  /** One check goes out alone and is held; two queue; when the first returns they go out as a batch. */
  private static List<Dispatcher.Check> run(Dispatcher dispatcher, Sender sender) {
    List<Dispatcher.Check> checks = List.of(check("a"), check("b"), check("c"));
    checks.forEach(dispatcher::submit);
    sender.first.complete(List.of(1L));
    return checks;
  }

  @Test
  void aCrossSlotRefusalSendsTheChecksAgainBySlotOnce() throws Exception {
    Sender sender = new Sender(new RedisException("CROSSSLOT Keys in request don't hash to the same slot"));
    Dispatcher dispatcher = new Dispatcher(sender, 1, 128, false);
    List<Dispatcher.Check> checks = run(dispatcher, sender);
    for (Dispatcher.Check c : checks) {
      assertThat(c.reply().get(5, TimeUnit.SECONDS)).containsExactly(1L);
    }
    assertThat(sender.singles).as("the first alone, then each refused one alone, once").hasSize(3);
    assertThat(dispatcher.batchesAcrossSlots()).isFalse();
  }

  @Test
  void aRefusedCheckWhoseCallerGaveUpOrWhoseTimePassedIsNotSentAgain() throws Exception {
    Sender sender = new Sender(null);
    sender.heldBatch = new CompletableFuture<>();
    Dispatcher dispatcher = new Dispatcher(sender, 1, 128, false);
    Dispatcher.Check first = check("a");
    Dispatcher.Check cancelled = check("b");
    Dispatcher.Check late = new Dispatcher.Check(null, List.of("{c}:p"), new Object[0],
        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200), new CompletableFuture<>());
    Dispatcher.Check onTime = check("d");
    List.of(first, cancelled, late, onTime).forEach(dispatcher::submit);
    sender.first.complete(List.of(1L)); // the other three go out as one batch, held
    cancelled.reply().cancel(false);
    Thread.sleep(300); // past the late check's last moment to go out: real time is the point
    sender.heldBatch.completeExceptionally(new RedisException("CROSSSLOT Keys in request don't hash to the same slot"));
    assertThat(onTime.reply().get(5, TimeUnit.SECONDS)).containsExactly(1L);
    assertThat(late.reply()).isCompletedExceptionally();
    assertThat(sender.singles).extracting(c -> c.keys().get(0)).as("only the on-time check goes again")
        .containsExactly("{a}:p", "{d}:p");
  }

  @Test
  void aTimeoutThatNamesAKeySpeltCrossSlotFailsTheBatchAndSendsNothingAgain() {
    Sender sender = new Sender(new RedisTimeoutException(
        "Command execution timeout for command: (EVALSHA), params: [sha, 2, rl:{CROSSSLOT}:p, rl:{b}:p]"));
    Dispatcher dispatcher = new Dispatcher(sender, 1, 128, false);
    List<Dispatcher.Check> checks = run(dispatcher, sender);
    assertThat(checks.get(0).reply()).isCompleted();
    assertThat(checks.get(1).reply()).isCompletedExceptionally();
    assertThat(checks.get(2).reply()).isCompletedExceptionally();
    assertThat(sender.singles).as("nothing sent again").hasSize(1);
    assertThat(dispatcher.batchesAcrossSlots()).isTrue();
  }
}

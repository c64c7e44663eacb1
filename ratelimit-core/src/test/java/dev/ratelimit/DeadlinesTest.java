package dev.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** checkAsync's timeouts: never early, shared per millisecond, never held back by a later slot. Real time is the point here. */
class DeadlinesTest {
  private final Deadlines deadlines = new Deadlines();

  @Test
  void aCallStillRunningAtItsDeadlineTimesOutThenAndNotBefore() throws Exception {
    List<CompletableFuture<String>> calls = new ArrayList<>();
    List<CompletableFuture<Long>> endedAt = new ArrayList<>();
    List<Long> due = new ArrayList<>();
    long start = System.nanoTime();
    for (int i = 0; i < 200; i++) { // deadlines spread over 40 ms: several per slot
      CompletableFuture<String> call = new CompletableFuture<>();
      long deadline = start + TimeUnit.MILLISECONDS.toNanos(30) + i * 200_000L;
      endedAt.add(call.handle((v, e) -> System.nanoTime()));
      deadlines.add(call, deadline);
      calls.add(call);
      due.add(deadline);
    }
    CompletableFuture<String> done = new CompletableFuture<>();
    deadlines.add(done, start + TimeUnit.SECONDS.toNanos(30));
    done.complete("answer");
    for (int i = 0; i < calls.size(); i++) {
      assertThat(calls.get(i)).failsWithin(Duration.ofSeconds(5)).withThrowableOfType(ExecutionException.class)
          .withCauseInstanceOf(TimeoutException.class);
      assertThat(endedAt.get(i).get(5, TimeUnit.SECONDS)).as("call %d timed out at or after its deadline", i)
          .isGreaterThanOrEqualTo(due.get(i));
    }
    assertThat(done).as("a call that answered in time keeps its answer").isCompletedWithValue("answer");
  }

  @Test
  void anEarlierDeadlineAddedAfterALaterOneIsNotHeldBackByIt() throws Exception {
    long now = System.nanoTime();
    CompletableFuture<String> later = new CompletableFuture<>();
    deadlines.add(later, now + TimeUnit.SECONDS.toNanos(30));
    CompletableFuture<String> earlier = new CompletableFuture<>();
    deadlines.add(earlier, now + TimeUnit.MILLISECONDS.toNanos(20));
    assertThat(earlier).failsWithin(Duration.ofSeconds(5));
    assertThat(later).as("the later one still waits for its own deadline").isNotDone();
    later.complete("done");
  }

  @Test
  void aDeadlineAlreadyPassedTimesOutAtOnceEvenAfterItsSlotFired() throws Exception {
    long now = System.nanoTime();
    CompletableFuture<String> first = new CompletableFuture<>();
    deadlines.add(first, now);
    assertThat(first).failsWithin(Duration.ofSeconds(5));
    CompletableFuture<String> second = new CompletableFuture<>();
    deadlines.add(second, now); // the same slot, which has fired
    assertThat(second).failsWithin(Duration.ofSeconds(5));
  }
}

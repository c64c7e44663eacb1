package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** check_batch.lua's one-string reply, read back into each check's list of integers or error. */
class BatchReplyTest {
  @Test
  void aLineIsTheIntegersCheckLuaWouldHaveReturned() {
    assertThat(BatchReply.integers("1 99 0 600000 0 1700000000000000 0", 0, 34))
        .containsExactly(1L, 99L, 0L, 600000L, 0L, 1_700_000_000_000_000L, 0L);
    String denial = "x0 0 3 59400000 0 1700000000000000 2 -5 1700000060000000x";
    assertThat(BatchReply.integers(denial, 1, denial.length() - 1))
        .as("negative numbers, and only the given range")
        .containsExactly(0L, 0L, 3L, 59_400_000L, 0L, 1_700_000_000_000_000L, 2L, -5L, 1_700_000_060_000_000L);
    assertThat(BatchReply.integers("9223372036854775807 -9223372036854775808", 0, 40))
        .as("19 digits").containsExactly(Long.MAX_VALUE, Long.MIN_VALUE);
  }

  @Test
  void eachCheckGetsItsLineOrItsErrorAndAShortReplyFailsTheRest() throws Exception {
    List<Dispatcher.Check> checks = IntStream.range(0, 4).mapToObj(i -> new Dispatcher.Check(null, List.of(),
        new Object[0], 0, new CompletableFuture<>())).toList();
    BatchReply.deliver(checks, "1 2\nE WRONGTYPE Operation against a key holding the wrong kind of value\n1 x\n");
    assertThat(checks.get(0).reply().get(1, TimeUnit.SECONDS)).containsExactly(1L, 2L);
    assertThat(failure(checks.get(1))).isEqualTo("WRONGTYPE Operation against a key holding the wrong kind of value");
    assertThat(failure(checks.get(2))).isEqualTo("unexpected batch reply line '1 x'");
    assertThat(failure(checks.get(3))).startsWith("unexpected batch reply 1 2\n");
  }

  private static String failure(Dispatcher.Check check) throws InterruptedException {
    try {
      check.reply().get(1, TimeUnit.SECONDS);
      throw new AssertionError("completed: " + check.reply());
    } catch (ExecutionException e) {
      return e.getCause().getMessage();
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError("never completed");
    }
  }
}

package dev.ratelimit;

import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.spi.Command;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A backend for tests that answers like the in-memory backend, or fails in the way it is told to:
 * throwing, failing the stage, answering null, or never answering until the test says so.
 */
final class ControllableBackend implements Backend {
  enum Mode { OK, THROW, FAIL_STAGE, NULL, HANG, SLOW, NOT_ROUTED }

  static final RuntimeException DOWN = new IllegalStateException("backend down");

  final InMemoryBackend memory = InMemoryBackend.create();
  volatile Mode mode = Mode.OK;
  /** Modes for the next calls, one each, before {@link #mode} applies again. */
  final Queue<Mode> next = new ConcurrentLinkedQueue<>();
  final AtomicInteger checkCalls = new AtomicInteger();
  final AtomicInteger checkAllCalls = new AtomicInteger();
  final AtomicInteger acrossCalls = new AtomicInteger();
  final AtomicInteger reserveCalls = new AtomicInteger();
  final AtomicInteger settleCalls = new AtomicInteger();
  /** The identities of the settles sent, in order. */
  final Queue<Long> settleIds = new ConcurrentLinkedQueue<>();
  /** What {@link #isRemote} answers: a remote backend's settles carry identities and are tried again. */
  volatile boolean remote;
  /** How long a {@link Mode#SLOW} call takes before it answers, in the caller's thread (ms of real time). */
  volatile long slowMillis = 100;
  /** Answers held back by {@link Mode#HANG}: completing one lets the call finish. */
  final Queue<Runnable> held = new ConcurrentLinkedQueue<>();

  /** Checks, as a remote backend answers them; inspections and resets fail unless the mode is OK. */
  @Override
  @SuppressWarnings("unchecked")
  public <R> CompletionStage<R> executeAsync(Command<R> command) {
    if (command instanceof Command.Check c) {
      checkCalls.incrementAndGet();
    } else if (command instanceof Command.CheckAll c) {
      checkAllCalls.incrementAndGet();
    } else if (command instanceof Command.CheckAcross c) {
      acrossCalls.incrementAndGet();
    } else if (command instanceof Command.Reserve c) {
      reserveCalls.incrementAndGet();
    } else if (command instanceof Command.GiveBack g) {
      settleCalls.incrementAndGet();
      settleIds.add(g.settleId());
    } else if (command instanceof Command.Charge c) {
      settleCalls.incrementAndGet();
      settleIds.add(c.settleId());
    } else {
      throw new AssertionError("the limiter calls execute for " + command);
    }
    return answer(() -> memory.execute(command));
  }

  @Override
  public boolean isAsync() {
    return true;
  }

  @Override
  public boolean checksAcrossKeys() {
    return true;
  }

  @Override
  public boolean reserves() {
    return true;
  }

  @Override
  public boolean isRemote() {
    return remote;
  }

  private <T> CompletionStage<T> answer(Supplier<T> ok) {
    Mode m = next.poll();
    switch (m != null ? m : mode) {
      case THROW:
        throw DOWN;
      case FAIL_STAGE:
        return CompletableFuture.supplyAsync(() -> {
          throw DOWN;
        });
      case NULL:
        return CompletableFuture.completedFuture(null);
      case NOT_ROUTED:
        return CompletableFuture.failedFuture(new dev.ratelimit.spi.NotRoutedException("slot moved", DOWN));
      case SLOW:
        try {
          Thread.sleep(slowMillis);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        return CompletableFuture.completedFuture(ok.get());
      case HANG:
        CompletableFuture<T> f = new CompletableFuture<>();
        held.add(() -> f.complete(ok.get()));
        return f.thenApply(x -> x); // a dependent stage, as a real client returns
      default:
        return CompletableFuture.completedFuture(ok.get());
    }
  }

  /** Lets every held call finish, as the in-memory backend answers now. */
  void releaseHeld() {
    for (Runnable r; (r = held.poll()) != null; ) {
      r.run();
    }
  }

  @Override
  public <R> R execute(Command<R> command) {
    if (command instanceof Command.Inspect || command instanceof Command.Reset) {
      if (mode != Mode.OK) {
        throw DOWN;
      }
      return memory.execute(command);
    }
    throw new AssertionError("the limiter calls executeAsync for " + command);
  }
}

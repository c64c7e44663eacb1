package dev.ratelimit;

import dev.ratelimit.memory.InMemoryBackend;
import dev.ratelimit.spi.Backend;
import java.util.List;
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
  /** How long a {@link Mode#SLOW} call takes before it answers, in the caller's thread (ms of real time). */
  volatile long slowMillis = 100;
  /** Answers held back by {@link Mode#HANG}: completing one lets the call finish. */
  final Queue<Runnable> held = new ConcurrentLinkedQueue<>();

  @Override
  public CompletionStage<Decision> checkAsync(String key, Policy policy, long cost, long nowMicros) {
    checkCalls.incrementAndGet();
    return answer(() -> memory.check(key, policy, cost, nowMicros));
  }

  @Override
  public CompletionStage<MultiDecision> checkAllAsync(String key, List<Policy> policies, long cost, long nowMicros) {
    checkAllCalls.incrementAndGet();
    return answer(() -> memory.checkAll(key, policies, cost, nowMicros));
  }

  @Override
  public CompletionStage<MultiDecision> checkAllAsync(List<KeyedPolicy> checks, long cost, long nowMicros) {
    acrossCalls.incrementAndGet();
    return answer(() -> memory.checkAll(checks, cost, nowMicros));
  }

  @Override
  public MultiDecision checkAll(List<KeyedPolicy> checks, long cost, long nowMicros) {
    throw new AssertionError("the limiter calls checkAllAsync");
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
  public Decision check(String key, Policy policy, long cost, long nowMicros) {
    throw new AssertionError("the limiter calls checkAsync");
  }

  @Override
  public MultiDecision checkAll(String key, List<Policy> policies, long cost, long nowMicros) {
    throw new AssertionError("the limiter calls checkAllAsync");
  }

  @Override
  public Decision inspect(String key, Policy policy, long nowMicros) {
    if (mode != Mode.OK) {
      throw DOWN;
    }
    return memory.inspect(key, policy, nowMicros);
  }

  @Override
  public Decision inspect(String key, Policy policy, long cost, long nowMicros) {
    if (mode != Mode.OK) {
      throw DOWN;
    }
    return memory.inspect(key, policy, cost, nowMicros);
  }

  @Override
  public void reset(String key, Policy policy, long nowMicros) {
    if (mode != Mode.OK) {
      throw DOWN;
    }
    memory.reset(key, policy, nowMicros);
  }
}

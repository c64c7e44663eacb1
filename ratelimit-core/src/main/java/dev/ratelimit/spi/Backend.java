package dev.ratelimit.spi;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Where the algorithms are evaluated and state is kept: the in-memory backend, Redis, or yours.
 * A backend implements one method, {@link #execute}, for each kind of {@link Command}; a remote
 * one also {@link #executeAsync}, and says what it can do ({@link #isAsync}, {@link
 * #checksAcrossKeys}, {@link #isRemote}).
 *
 * <pre>{@code
 * public <R> R execute(Command<R> command) {
 *   if (command instanceof Command.Check c) {
 *     return (R) myCheck(c.key(), c.policy(), c.cost(), c.nowMicros());
 *   }
 *   ...
 * }
 * }</pre>
 *
 * <p>The {@link dev.ratelimit.RateLimiter} validates every argument, reads the clock and passes
 * {@code nowMicros} (epoch microseconds); a backend decides at that time, unless it is configured
 * to decide at a clock of its own (Redis's server time, an opt-in), and then says which time it
 * used ({@link Evaluation#nowMicros}). Every command is thread-safe, and each check is atomic for
 * its key: concurrent checks on one key behave as if run one after another. A denied check, an
 * {@link Command.Inspect} and a failed call change no state.
 *
 * <p>State identity is ({@code key}, {@code policy.name()}, {@code policy.algorithm()}): policies
 * that differ in either never share state, and a named policy keeps its keys when its numbers change.
 *
 * <p>What the limiter sends: checks ({@link Command.Check}, {@link Command.CheckAll}, {@link
 * Command.CheckAcross}) through {@link #executeAsync} when the backend {@link #isAsync is
 * asynchronous}, waiting no longer than its timeout, else through {@link #execute} on the caller's
 * thread; inspections and resets through {@link #execute}. Its near-cache, on by default for a
 * {@link #isRemote remote} backend, learns from the state a denial's {@link Evaluation} carries.
 * The contract suite ({@code ratelimit-tck}) drives every command of a backend.
 */
public interface Backend extends AutoCloseable {

  /**
   * Runs {@code command} and answers it, blocking the caller while it runs.
   *
   * @throws RuntimeException when the backend fails; the limiter's failure mode then decides
   */
  <R> R execute(Command<R> command);

  /**
   * Runs {@code command} without blocking the caller; failures complete the stage exceptionally.
   * The default runs {@link #execute} on the calling thread. A backend whose calls can hang
   * (anything remote) overrides it, returns promptly, and says so with {@link #isAsync}: only what
   * happens after the stage is returned can be bounded by the limiter's timeout.
   */
  default <R> CompletionStage<R> executeAsync(Command<R> command) {
    try {
      return CompletableFuture.completedFuture(execute(command));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Whether {@link #executeAsync} is this backend's own and never blocks: the limiter then sends
   * every check through it, also a synchronous one, bounded by its timeout. Default false: checks go
   * through {@link #execute} directly, free of futures.
   */
  default boolean isAsync() {
    return false;
  }

  /**
   * Whether the backend takes {@link Command.CheckAcross}, pairs of different keys checked together;
   * default false, and the limiter refuses such checks with an {@link UnsupportedOperationException}.
   */
  default boolean checksAcrossKeys() {
    return false;
  }

  /**
   * Whether the backend takes {@link Command.Reserve}, {@link Command.GiveBack} and {@link
   * Command.Charge}: reservations. Default false, and the limiter refuses reservations with an
   * {@link UnsupportedOperationException}.
   */
  default boolean reserves() {
    return false;
  }

  /**
   * Whether the state lives outside this JVM (a network round trip per call). The limiter turns its
   * near-cache on by default for a remote backend.
   */
  default boolean isRemote() {
    return false;
  }

  /** Releases what the backend holds; state owned by a server stays there. */
  @Override
  default void close() {}
}

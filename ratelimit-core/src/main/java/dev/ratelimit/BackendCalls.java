package dev.ratelimit;

import dev.ratelimit.internal.LogThrottle;
import dev.ratelimit.spi.NotRoutedException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * The limiter's calls to its backend: each through the circuit breaker, bounded by the timeout
 * (waited for, or without waiting), and reported to the listener, the breaker and a throttled
 * log; an answer, or null for the failure mode to decide.
 */
final class BackendCalls {
  private static final System.Logger LOG = System.getLogger(RateLimiter.class.getName());

  private final CircuitBreaker breaker;
  private final RateLimitListener listener;
  private final Duration timeout;
  private final FailureMode failureMode;
  private final LogThrottle errorLog;
  /** Times out the calls made without waiting. */
  private final Deadlines deadlines = new Deadlines();

  BackendCalls(CircuitBreaker breaker, RateLimitListener listener, Duration timeout, FailureMode failureMode,
      LogThrottle errorLog) {
    this.breaker = breaker;
    this.listener = listener;
    this.timeout = timeout;
    this.failureMode = failureMode;
    this.errorLog = errorLog;
  }

  /**
   * {@link #call} without waiting: the stage completes with the answer, or with null when the call
   * was skipped, failed or timed out at {@code deadline} (already reported).
   */
  <T> CompletableFuture<T> callAsync(Supplier<CompletionStage<T>> backendCall, long startNanos, long deadline) {
    return callAsync(backendCall, startNanos, deadline, null);
  }

  /** {@link #callAsync(Supplier, long, long)}, a failure logged as {@code failedLine} (null: the failure mode decides). */
  <T> CompletableFuture<T> callAsync(Supplier<CompletionStage<T>> backendCall, long startNanos, long deadline,
      String failedLine) {
    long permit = breaker.tryAcquire();
    if (permit == CircuitBreaker.REFUSED) {
      return CompletableFuture.completedFuture(null);
    }
    CompletableFuture<T> answer;
    try {
      answer = future(backendCall.get());
    } catch (RuntimeException e) {
      settle(permit, startNanos, null, e, failedLine);
      return CompletableFuture.completedFuture(null);
    }
    if (answer.isDone()) {
      return CompletableFuture.completedFuture(settled(permit, startNanos, answer, null, failedLine));
    }
    CompletableFuture<T> bounded = new CompletableFuture<>();
    answer.whenComplete((v, e) -> {
      if (e != null) {
        bounded.completeExceptionally(e);
      } else {
        bounded.complete(v);
      }
    });
    deadlines.add(bounded, deadline);
    // settled runs when the call ends even if the caller gave up on its stage (the permit goes back)
    CompletableFuture<T> result = new CompletableFuture<>();
    bounded.whenComplete((v, e) -> {
      try {
        result.complete(settled(permit, startNanos, answer, e, failedLine));
      } catch (Throwable t) {
        result.completeExceptionally(t);
      }
    });
    return result;
  }

  /** The answer of a finished {@link #callAsync}, reported; null when it failed or timed out. */
  private <T> T settled(long permit, long startNanos, CompletableFuture<T> answer, Throwable boundedError,
      String failedLine) {
    T value = null;
    Throwable error;
    if (boundedError == null && answer.isDone() && !answer.isCompletedExceptionally()) {
      value = answer.join();
      error = null;
    } else if (boundedError instanceof TimeoutException && !answer.isDone()) {
      error = timedOut();
    } else {
      error = cause(boundedError != null ? boundedError : exceptionOf(answer));
    }
    return settle(permit, startNanos, value, error, failedLine) ? value : null;
  }

  /**
   * One backend call through the breaker, made at {@code startNanos} and waited for until {@code
   * deadline} (System.nanoTime); its answer, or null when it was skipped, failed or timed out
   * (already reported).
   */
  <T> T call(Supplier<CompletionStage<T>> backendCall, long startNanos, long deadline) {
    return call(backendCall, startNanos, deadline, null);
  }

  /**
   * {@link #call(Supplier, long, long)}, a failure logged as {@code failedLine} (null: the failure
   * mode decides, as for a check).
   */
  <T> T call(Supplier<CompletionStage<T>> backendCall, long startNanos, long deadline, String failedLine) {
    long permit = breaker.tryAcquire();
    if (permit == CircuitBreaker.REFUSED) {
      return null;
    }
    T result = null;
    Throwable error = null;
    try {
      result = awaitUninterruptibly(future(backendCall.get()), deadline);
    } catch (ExecutionException e) {
      error = cause(e);
    } catch (TimeoutException e) {
      error = timedOut();
    } catch (CancellationException | CompletionException e) {
      error = cause(e);
    } catch (RuntimeException e) {
      error = e;
    }
    return settle(permit, startNanos, result, error, failedLine) ? result : null;
  }

  /**
   * {@code f}'s result, waited for until {@code deadline} (System.nanoTime) even when the caller is
   * interrupted: the call has been sent and may have counted, so its answer, not the failure mode's,
   * is the true one (a FAIL_CLOSED denial of a check Redis counted, or a local fallback counting it
   * twice, would not be). The interrupt is kept for the caller.
   */
  private static <T> T awaitUninterruptibly(CompletableFuture<T> f, long deadline)
      throws ExecutionException, TimeoutException {
    boolean interrupted = false;
    try {
      for (;;) {
        try {
          return f.isDone() ? f.get() : f.get(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) { // the flag is now clear: the next wait blocks
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Reports a finished call to the listener, the breaker and the log; whether it succeeded. */
  boolean settle(long permit, long startNanos, Object result, Throwable error) {
    return settle(permit, startNanos, result, error, null);
  }

  private boolean settle(long permit, long startNanos, Object result, Throwable error, String failedLine) {
    if (error == null && result == null) {
      error = new IllegalStateException("the backend answered null");
    }
    boolean ok = error == null;
    if (listener != RateLimitListener.NONE) {
      listener.onBackendCall(System.nanoTime() - startNanos, ok);
    }
    // a call the backend could not route (one slot moving) tells nothing of the backend's health
    breaker.onResult(permit, ok || cause(error) instanceof NotRoutedException);
    if (!ok) {
      listener.onBackendError(error);
      logError(failedLine != null ? failedLine : "the rate limiter's backend failed; " + failureMode + " decides",
          error);
    }
    return ok;
  }

  TimeoutException timedOut() {
    return new TimeoutException("the backend did not answer within " + timeout);
  }

  void logError(String message, Throwable error) {
    long suppressed = errorLog.tryAcquire("backend");
    if (suppressed < 0) {
      return;
    }
    String line = message + ": " + error
        + (suppressed > 0 ? " (" + suppressed + " more since the last line)" : "")
        + " (logged at most once every 10 s)";
    if (error instanceof TimeoutException) {
      LOG.log(Level.WARNING, line);
    } else {
      LOG.log(Level.WARNING, line, error);
    }
  }

  /** The stage as a future of ours to wait on; never completes or cancels the backend's stage. */
  static <T> CompletableFuture<T> future(CompletionStage<T> stage) {
    if (stage == null) {
      return CompletableFuture.failedFuture(new IllegalStateException("the backend returned no stage"));
    }
    if (stage instanceof CompletableFuture<T> f) {
      return f;
    }
    CompletableFuture<T> f = new CompletableFuture<>();
    stage.whenComplete((v, e) -> {
      if (e != null) {
        f.completeExceptionally(e);
      } else {
        f.complete(v);
      }
    });
    return f;
  }

  static Throwable exceptionOf(CompletableFuture<?> f) {
    try {
      f.join();
      return new IllegalStateException("the backend's stage did not complete");
    } catch (CompletionException | CancellationException e) {
      return e;
    }
  }

  /** The backend's own exception, out of the wrappers of futures. */
  static Throwable cause(Throwable e) {
    Throwable t = e;
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}

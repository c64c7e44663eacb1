package dev.ratelimit.redis;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Decision;
import dev.ratelimit.FailureMode;
import dev.ratelimit.ManualClock;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.Policy;
import dev.ratelimit.RateLimitListener;
import dev.ratelimit.RateLimiter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Function;
import org.redisson.api.RedissonClient;

/**
 * A steady load on a Redis topology while it changes: several limiter instances (each its own
 * Redisson client, as separate application instances are), each with several calling threads,
 * checking a mix of the six algorithms and a two-policy {@code checkAll}, FAIL_OPEN.
 *
 * <p>Every policy admits 100 per minute and the limiters' clock stands still, so a (key, policy)
 * may be admitted exactly 100 times, ever: each admission beyond that is one the limit lost. The
 * work is a sequence handed out to the threads in order: item {@code n} goes to stream {@code n %
 * STREAMS} (a stream's keys are its own, spread over the hash slots), and each key of a stream
 * takes {@value #CHECKS_PER_KEY} items in turn over the six policies and {@code checkAll}, so every
 * policy is offered 120 or more units per key (exhausted: over-admission would show) and fresh
 * keys are written all the time (writes are in flight when the topology changes).
 *
 * <p>A caller answered by the failure mode pauses 1 ms before its next check (while the circuit is
 * open the answer comes at once, and the threads would spin). It records, per key and policy, the admissions Redis decided (not those of the failure mode:
 * degraded decisions, {@link Decision#isDegraded()}, count nothing in Redis); the decisions the
 * failure mode made, in all and after {@link #markEvent()}; every exception that reached a caller;
 * and the last moment a decision came from the failure mode.
 */
final class TopologyLoad implements AutoCloseable {
  /** The limit of every policy: 100 per minute, on a clock that stands still. */
  static final int LIMIT = 100;
  static final List<Policy> POLICIES = List.of(
      policy(Algorithm.FIXED_WINDOW), policy(Algorithm.SLIDING_LOG), policy(Algorithm.SLIDING_WINDOW),
      policy(Algorithm.TOKEN_BUCKET), policy(Algorithm.GCRA), policy(Algorithm.LEAKY_BUCKET));
  /** What checkAll checks: the fixed window and GCRA policies of {@link #POLICIES} (indexes 0 and 4). */
  static final List<Policy> ALL = List.of(POLICIES.get(0), POLICIES.get(4));
  private static final int[] ALL_INDEXES = {0, 4};
  static final int STREAMS = 16;
  static final int CHECKS_PER_KEY = (POLICIES.size() + 1) * 120;

  private final List<RedissonClient> clients;
  private final List<RateLimiter> limiters = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private final AtomicLong sequence = new AtomicLong();
  private final Map<String, AtomicLongArray> admitted = new ConcurrentHashMap<>();
  private final AtomicLong checks = new AtomicLong();
  private final AtomicLong fromRedis = new AtomicLong();
  private final AtomicLong degraded = new AtomicLong();
  private final AtomicLong degradedAfterEvent = new AtomicLong();
  private final AtomicLong fromRedisAfterEvent = new AtomicLong();
  private final AtomicLong lastDegradedNanos = new AtomicLong(Long.MIN_VALUE);
  private final Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
  /** The backend's errors (which the failure mode decided), by kind: class and the start of the message. */
  private final Map<String, AtomicLong> backendErrors = new ConcurrentHashMap<>();
  private volatile long eventNanos = Long.MAX_VALUE;
  private volatile boolean running = true;

  /**
   * Starts {@code threadsPerInstance} threads on each of {@code clients.size()} limiters, whose
   * backends {@code backend} builds on each client (with the test's own key prefix).
   */
  TopologyLoad(List<RedissonClient> clients, Function<RedissonClient, RedisBackend> backend, int threadsPerInstance) {
    this(clients, backend, threadsPerInstance, null);
  }

  /**
   * {@link #TopologyLoad(List, Function, int)} with the limiters' {@code timeout} (null: the
   * default, what users get).
   */
  TopologyLoad(List<RedissonClient> clients, Function<RedissonClient, RedisBackend> backend, int threadsPerInstance,
      Duration timeout) {
    this.clients = List.copyOf(clients);
    ManualClock clock = ManualClock.at(Instant.ofEpochSecond(1_700_000_000L));
    for (RedissonClient client : clients) {
      // the default circuit breaker and timeout: what users get; no near-cache: every check reaches Redis
      RateLimiter.Builder builder = RateLimiter.builder();
      if (timeout != null) {
        builder.timeout(timeout);
      }
      limiters.add(builder.clock(clock).backend(backend.apply(client)).nearCache(false)
          .failureMode(FailureMode.FAIL_OPEN).listener(new RateLimitListener() {
            @Override
            public void onBackendError(Throwable error) {
              Throwable e = error;
              while (e.getCause() != null && e.getCause() != e
                  && (e instanceof java.util.concurrent.CompletionException || e.getMessage() == null)) {
                e = e.getCause();
              }
              String m = String.valueOf(e.getMessage());
              String kind = e.getClass().getSimpleName() + (m.contains("redirect=MOVED") ? " (MOVED)"
                  : m.contains("redirect=ASK") ? " (ASK)" : "");
              if (e.getCause() != null && e.getCause() != e) {
                kind += " <- " + e.getCause().getClass().getSimpleName();
                String c = String.valueOf(e.getCause().getMessage());
                kind += c.contains("redirect=MOVED") ? " (MOVED)" : c.contains("redirect=ASK") ? " (ASK)" : "";
              }
              backendErrors.computeIfAbsent(kind, k -> new AtomicLong()).incrementAndGet();
            }
          }).build());
    }
    for (int i = 0; i < limiters.size(); i++) {
      RateLimiter limiter = limiters.get(i);
      for (int t = 0; t < threadsPerInstance; t++) {
        Thread thread = new Thread(() -> run(limiter), "load-" + i + "-" + t);
        thread.setDaemon(true);
        threads.add(thread);
      }
    }
    threads.forEach(Thread::start);
  }

  private static Policy policy(Algorithm algorithm) {
    return Policy.of(LIMIT, Duration.ofMinutes(1)).withAlgorithm(algorithm).withName("p-" + algorithm);
  }

  /** The key of work item {@code n}, and which of the seven operations it is. */
  static String key(long n) {
    return "s" + (n % STREAMS) + ":k" + (n / STREAMS / CHECKS_PER_KEY);
  }

  private void run(RateLimiter limiter) {
    while (running) {
      long n = sequence.getAndIncrement();
      String key = key(n);
      int op = (int) ((n / STREAMS) % (POLICIES.size() + 1));
      boolean byFailureMode = false;
      try {
        if (op < POLICIES.size()) {
          Decision d = limiter.check(key, POLICIES.get(op));
          byFailureMode = d.isDegraded();
          record(byFailureMode);
          if (d.allowed() && !d.isDegraded()) {
            counts(key).incrementAndGet(op);
          }
        } else {
          MultiDecision m = limiter.checkAll(key, ALL, 1);
          byFailureMode = m.decisions().stream().anyMatch(Decision::isDegraded);
          record(byFailureMode);
          if (m.allowed() && !byFailureMode) {
            for (int i : ALL_INDEXES) {
              counts(key).incrementAndGet(i);
            }
          }
        }
      } catch (Throwable e) {
        errors.add(e);
      }
      if (byFailureMode) {
        // answered at once while the circuit is open: a caller would go on to do its work; without
        // a pause the threads spin, the counts mean nothing and a small machine has no CPU left
        sleep(1);
      }
    }
  }

  private AtomicLongArray counts(String key) {
    return admitted.computeIfAbsent(key, k -> new AtomicLongArray(POLICIES.size()));
  }

  private void record(boolean byFailureMode) {
    checks.incrementAndGet();
    boolean after = System.nanoTime() - eventNanos >= 0;
    if (byFailureMode) {
      degraded.incrementAndGet();
      long now = System.nanoTime();
      lastDegradedNanos.accumulateAndGet(now, Math::max);
      if (after) {
        degradedAfterEvent.incrementAndGet();
      }
    } else {
      fromRedis.incrementAndGet();
      if (after) {
        fromRedisAfterEvent.incrementAndGet();
      }
    }
  }

  /** Waits until at least {@code n} decisions came from Redis (the load runs), at most 30 s. */
  TopologyLoad warmUp(long n) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (fromRedis.get() < n && System.nanoTime() < deadline) {
      sleep(10);
    }
    return this;
  }

  /** The work item handed out next: keys at and after {@code key(next())} are the ones written now. */
  long next() {
    return sequence.get();
  }

  /** The threads calling, all instances together: at most this many checks are in flight at once. */
  int callers() {
    return threads.size();
  }

  /** The moment the topology change begins: recovery is measured from here. */
  void markEvent() {
    eventNanos = System.nanoTime();
  }

  /**
   * Waits until no decision came from the failure mode for {@code quiet} while at least {@code
   * quietDecisions} came from Redis, or until {@code atMost} after the event; then stops the load.
   */
  Result finish(Duration quiet, long quietDecisions, Duration atMost) {
    long deadline = eventNanos + atMost.toNanos();
    while (System.nanoTime() < deadline) {
      long since = Math.max(lastDegradedNanos.get(), eventNanos);
      long before = fromRedis.get();
      sleep(quiet.toMillis());
      if (lastDegradedNanos.get() <= since && fromRedis.get() - before >= quietDecisions) {
        break;
      }
    }
    running = false;
    for (Thread t : threads) {
      try {
        t.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    return result();
  }

  private Result result() {
    Map<String, Long> over = new TreeMap<>();
    long overTotal = 0;
    for (Map.Entry<String, AtomicLongArray> e : admitted.entrySet()) {
      for (int i = 0; i < POLICIES.size(); i++) {
        long beyond = e.getValue().get(i) - LIMIT;
        if (beyond > 0) {
          over.put(e.getKey() + " " + POLICIES.get(i).name(), beyond);
          overTotal += beyond;
        }
      }
    }
    long last = lastDegradedNanos.get();
    Duration recovery = last == Long.MIN_VALUE || last - eventNanos < 0 ? Duration.ZERO
        : Duration.ofNanos(last - eventNanos);
    return new Result(checks.get(), fromRedis.get(), degraded.get(), fromRedisAfterEvent.get(),
        degradedAfterEvent.get(), overTotal, over, List.copyOf(errors), recovery,
        new TreeMap<>(backendErrors.entrySet().stream().collect(java.util.stream.Collectors.toMap(
            Map.Entry::getKey, e -> e.getValue().get()))));
  }

  /** Stops the load (if {@link #finish} did not) and closes the limiters; the clients are the caller's. */
  @Override
  public void close() {
    running = false;
    for (Thread t : threads) {
      try {
        t.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    limiters.forEach(RateLimiter::close);
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * What a run measured.
   *
   * @param checks decisions in all (a checkAll is one)
   * @param fromRedis decisions Redis made
   * @param byFailureMode decisions the failure mode made (the backend failed or timed out, or the circuit was open)
   * @param fromRedisAfterEvent decisions Redis made after the event began
   * @param byFailureModeAfterEvent decisions the failure mode made after the event began
   * @param overAdmitted admissions beyond a policy's limit, summed over (key, policy)
   * @param overAdmittedByKey those admissions, by "key policy"
   * @param errors exceptions that reached a caller
   * @param recovery from the event's start to the last decision the failure mode made (zero: none)
   * @param backendErrors the backend's errors (decided by the failure mode; the open circuit's skipped calls
   *     are not errors), by kind
   */
  record Result(long checks, long fromRedis, long byFailureMode, long fromRedisAfterEvent,
      long byFailureModeAfterEvent, long overAdmitted, Map<String, Long> overAdmittedByKey, List<Throwable> errors,
      Duration recovery, Map<String, Long> backendErrors) {
    /** The backend's errors, all kinds together: each is one decision of the failure mode. */
    long backendErrorCount() {
      return backendErrors.values().stream().mapToLong(Long::longValue).sum();
    }

    @Override
    public String toString() {
      return "checks " + checks + ", from Redis " + fromRedis + ", by the failure mode " + byFailureMode
          + " (after the event: from Redis " + fromRedisAfterEvent + ", by the failure mode " + byFailureModeAfterEvent
          + "), over-admitted " + overAdmitted + " " + overAdmittedByKey + ", errors " + errors.size()
          + (errors.isEmpty() ? "" : " (first: " + errors.get(0) + ")") + ", recovery " + recovery.toMillis() + " ms, backend errors " + backendErrors;
    }
  }
}

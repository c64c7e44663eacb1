package dev.ratelimit.redis;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Supplier;
import org.redisson.client.RedisTimeoutException;

/**
 * Natural batching: sends single-policy checks to Redis alone while few are in flight, and
 * together when more arrive meanwhile.
 *
 * <p>Each lane (the one server, or one Cluster hash slot; one per slot too behind a server that
 * refused a batch across slots, see {@link #batchPerSlot}) lets {@code maxInFlight} calls be under
 * way at once. A check that finds a free place goes out at once as {@code check.lua}, so an idle
 * client adds no latency. A check that finds none waits in the lane's queue; when a call returns,
 * the queue, up to {@code maxBatch} checks in arrival order, goes out as one {@code EVALSHA} of
 * {@code check_batch.lua}, which runs the same {@code check_one} for each, one after the other, and
 * returns each check's own reply. The next batch is sent before the replies of the last are handed
 * out, so the server works while the callers' continuations run.
 *
 * <p>Exactly once: a batch goes out once, with no retries (the backend's script executor); when it
 * fails or times out, every check in it fails, for the limiter's failure mode. {@code NOSCRIPT} is
 * retried after a load because nothing ran. A queued check found still waiting, when a call returns,
 * half the backend's timeout after it arrived is failed without ever being sent: a check sent that
 * late to a Redis that slow has little time left before its caller gives up on it, and Redis may
 * still run it afterwards and count it (as it may any command sent to a stalled server: this
 * narrows that window, it cannot close it).
 */
final class Dispatcher {
  /** Sends one check alone (check.lua's reply), or several as one batch (check_batch.lua's, see {@link BatchReply}). */
  interface Sender {
    CompletionStage<List<Object>> one(Check check);

    CompletionStage<String> batch(List<Check> checks);
  }

  /**
   * One check: what the single-check script is given, the last moment ({@link System#nanoTime()})
   * it may still go out from the queue, and where its reply goes.
   */
  record Check(Lua lua, List<Object> keys, Object[] args, long sendByNanos,
      CompletableFuture<List<Object>> reply) {}

  private static final System.Logger LOG = System.getLogger(RedisBackend.class.getName());

  private final Sender sender;
  private final int maxInFlight;
  private final int maxBatch;
  /** The one lane of a server; null in a Cluster, or once the server refused a batch across slots. */
  private volatile Lane single;
  private final AtomicReferenceArray<Lane> slots = new AtomicReferenceArray<>(RedisKeys.SLOTS);

  Dispatcher(Sender sender, int maxInFlight, int maxBatch, boolean cluster) {
    this.sender = sender;
    this.maxInFlight = maxInFlight;
    this.maxBatch = maxBatch;
    this.single = cluster ? null : new Lane(true);
  }

  /** For tests: whether checks of different hash slots may share a batch. */
  boolean batchesAcrossSlots() {
    return single != null;
  }

  /** Sends {@code check} now or with the next batch of its lane; its reply completes its future. */
  CompletableFuture<List<Object>> submit(Check check) {
    lane(check).submit(check);
    return check.reply();
  }

  private Lane lane(Check check) {
    Lane one = single;
    if (one != null) {
      return one;
    }
    int slot = RedisKeys.slot((String) check.keys().get(0));
    Lane lane = slots.get(slot);
    if (lane == null) {
      slots.compareAndSet(slot, null, new Lane(false));
      lane = slots.get(slot);
    }
    return lane;
  }

  /** The checks of one server or one hash slot: at most maxInFlight calls at a time. */
  private final class Lane {
    private final ArrayDeque<Check> queue = new ArrayDeque<>();
    /** Whether its checks may be of different hash slots: the one lane of a server. */
    private final boolean acrossSlots;
    private int inFlight;

    Lane(boolean acrossSlots) {
      this.acrossSlots = acrossSlots;
    }

    void submit(Check check) {
      synchronized (this) {
        if (inFlight >= maxInFlight) {
          queue.add(check);
          return;
        }
        inFlight++;
      }
      send(List.of(check));
    }

    private void send(List<Check> checks) {
      if (checks.size() == 1) {
        Check check = checks.get(0);
        sent(() -> sender.one(check)).whenComplete((reply, error) -> {
          sendNext();
          if (error == null) {
            check.reply().complete(reply);
          } else {
            check.reply().completeExceptionally(error);
          }
        });
        return;
      }
      sent(() -> sender.batch(checks)).whenComplete((reply, error) -> {
        sendNext();
        Throwable failure = error;
        if (failure == null) {
          try {
            BatchReply.deliver(checks, reply);
          } catch (RuntimeException e) { // a bug: no check may be left waiting
            failure = e;
          }
        }
        if (failure != null && acrossSlots && isCrossSlot(failure)) {
          batchPerSlot();
          resend(checks); // refused whole, nothing ran: each goes out once, by its slot
        } else if (failure != null) {
          Throwable cause = failure;
          checks.forEach(c -> c.reply().completeExceptionally(cause));
        }
      });
    }

    /** After a call returned: the queued checks as the next call, or one place fewer in flight. */
    private void sendNext() {
      synchronized (this) {
        if (queue.isEmpty()) { // the common case when idle: nothing to send, one place fewer in flight
          inFlight--;
          return;
        }
      }
      List<Check> next = new ArrayList<>(Math.min(maxBatch, 64));
      List<Check> expired = null;
      long now = System.nanoTime();
      synchronized (this) {
        while (next.size() < maxBatch && !queue.isEmpty()) {
          Check c = queue.poll();
          if (c.reply().isDone()) {
            continue; // its caller gave up on it (cancelled): never sent
          }
          if (late(c, now)) {
            if (expired == null) {
              expired = new ArrayList<>();
            }
            expired.add(c);
            continue;
          }
          next.add(c);
        }
        if (next.isEmpty()) {
          inFlight--;
        }
      }
      if (expired != null) {
        RedisTimeoutException timeout = neverSent();
        expired.forEach(c -> c.reply().completeExceptionally(timeout));
      }
      if (!next.isEmpty()) {
        send(next);
      }
    }
  }

  /**
   * From now on, a lane per hash slot: the server refused a batch whose keys hash to different
   * slots (CROSSSLOT), as a proxy that shards behind one address does (Redis Enterprise's, for
   * one), before running any of it. Checks already queued in the one lane still go out from it, and any batch of
   * them refused is sent again the same way.
   */
  private synchronized void batchPerSlot() {
    if (single != null) {
      single = null;
      LOG.log(System.Logger.Level.WARNING, "Redis refused a batch of checks whose keys are in different"
          + " hash slots (CROSSSLOT): a sharding proxy? Checks now batch per hash slot. Configure Redisson"
          + " for the cluster (useClusterServers) if it is one.");
    }
  }

  /**
   * Sends again, each by its slot, the checks of a batch refused across slots, as a lane's queue
   * would send them: not one whose caller gave up, and not one past its last moment to go out.
   */
  private void resend(List<Check> checks) {
    long now = System.nanoTime();
    for (Check c : checks) {
      if (c.reply().isDone()) {
        continue;
      }
      if (late(c, now)) {
        c.reply().completeExceptionally(neverSent());
      } else {
        submit(c);
      }
    }
  }

  /** Whether {@code c} is past its last moment to go out (half the backend's timeout after it arrived). */
  private static boolean late(Check c, long now) {
    return now - c.sendByNanos() > 0;
  }

  private static RedisTimeoutException neverSent() {
    return new RedisTimeoutException(
        "the check waited in the batch queue for half the backend's timeout; it was never sent");
  }

  /**
   * Whether {@code error} is Redis's refusal of keys in different hash slots (nothing ran): an
   * error reply that begins with {@code CROSSSLOT}, not any message that mentions it (a timeout's
   * names the command's keys, which a client may choose).
   */
  private static boolean isCrossSlot(Throwable error) {
    for (Throwable e = error; e != null; e = e.getCause()) {
      if (e.getMessage() != null && e.getMessage().startsWith("CROSSSLOT ")) {
        return true;
      }
    }
    return false;
  }

  /** The sender's stage, or a failed one when sending threw. */
  private static <T> CompletionStage<T> sent(Supplier<CompletionStage<T>> send) {
    try {
      return send.get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }
}

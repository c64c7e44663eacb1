package dev.ratelimit.service;

import static dev.ratelimit.service.envoy.RlsClient.d;
import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.service.envoy.GrpcServer;
import dev.ratelimit.tck.redis.RedisServer;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A load run of {@code ShouldRateLimit}, in the {@code load} profile only ({@code ./mvnw -B -Pload
 * -pl examples/ratelimit-service -am verify -Dtest=EnvoyLoadTest -Dsurefire.failIfNoSpecifiedTests=false}):
 * {@value #STREAMS} concurrent gRPC streams on one HTTP/2 connection, each sending its next request
 * as soon as its answer arrives, over {@value #KEYS} keys round-robin, against the service on Redis
 * ({@code REDIS_URL}, else a {@code redis-server} it starts), for {@code -Dload.seconds} (default 20)
 * after {@code -Dload.warmup} seconds (default 10) of the same traffic on other keys. It prints
 * requests/s and latency percentiles (and appends them to {@code target/load-report.md}), then checks
 * exact admission: with a rule of 100 a day in a sliding log, each key admitted exactly
 * {@code min(sent, 100)}.
 */
@Tag("load")
class EnvoyLoadTest {
  static final int STREAMS = 64;
  static final int KEYS = 1_000;
  static final int LIMIT = 100;
  static final int SECONDS = Integer.getInteger("load.seconds", 20);
  static final int WARM_UP_SECONDS = Integer.getInteger("load.warmup", 10);

  @Test
  void shouldRateLimitOnRedis() throws Exception {
    Map<String, String> env = new HashMap<>();
    env.put("RATELIMIT_REDIS_URL", RedisServer.shared().url());
    env.put("RATELIMIT_REDIS_KEY_PREFIX", "envoy-load-" + System.nanoTime());
    env.put("RATELIMIT_SERVICE_GRPC_ENABLED", "true");
    env.put("RATELIMIT_SERVICE_GRPC_PORT", "0");
    env.put("RATELIMIT_SERVICE_GRPC_CONFIG", "classpath:envoy-load/load.yaml");
    env.put("LOGGING_LEVEL_ROOT", "WARN");
    env.put("RATELIMIT_TIMEOUT", "5s"); // a timed-out check could still count in Redis: no timeouts here
    env.put("RATELIMIT_REDIS_TIMEOUT", "5s");
    try (ConfigurableApplicationContext service = ServiceInstances.start(env)) {
      ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", service.getBean(GrpcServer.class).port())
          .usePlaintext().build();
      try {
        RateLimitServiceGrpc.RateLimitServiceStub stub = RateLimitServiceGrpc.newStub(channel);
        run(stub, "warm-up-" + System.nanoTime(), WARM_UP_SECONDS, false);
        run(stub, "run-" + System.nanoTime(), SECONDS, true);
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }

  private static void run(RateLimitServiceGrpc.RateLimitServiceStub stub, String run, int seconds, boolean measured)
      throws Exception {
    AtomicLongArray sent = new AtomicLongArray(KEYS);
    AtomicLongArray admitted = new AtomicLongArray(KEYS);
    AtomicLong errors = new AtomicLong();
    long[][] latencies = new long[STREAMS][];
    long deadline = System.nanoTime() + seconds * 1_000_000_000L;
    CountDownLatch done = new CountDownLatch(STREAMS);
    long started = System.nanoTime();
    for (int s = 0; s < STREAMS; s++) {
      new Stream(stub, run, s, deadline, sent, admitted, errors, latencies, done).next();
    }
    assertThat(done.await(seconds + 60L, TimeUnit.SECONDS)).as("every stream finished").isTrue();
    double elapsed = (System.nanoTime() - started) / 1e9;
    if (!measured) {
      return;
    }
    long[] all = Arrays.stream(latencies).flatMapToLong(Arrays::stream).sorted().toArray();
    report(String.format(Locale.ROOT, "| redis | %d | %d | %d | %,d | %,.0f | %.2f | %.2f | %.2f | %,d |",
        STREAMS, KEYS, seconds, all.length, all.length / elapsed, LoadReport.percentileMillis(all, 0.50), LoadReport.percentileMillis(all, 0.99),
        LoadReport.percentileMillis(all, 0.999), errors.get()));
    assertThat(errors.get()).as("failed calls").isZero();
    for (int key = 0; key < KEYS; key++) {
      assertThat(admitted.get(key)).as("admitted for key %d of %d sent", key, sent.get(key))
          .isEqualTo(Math.min(sent.get(key), LIMIT));
    }
  }

  /** One stream of calls: the next is sent when the previous answer arrives, until the deadline. */
  private static final class Stream implements StreamObserver<RateLimitResponse> {
    private final RateLimitServiceGrpc.RateLimitServiceStub stub;
    private final String run;
    private final int index;
    private final long deadline;
    private final AtomicLongArray sent;
    private final AtomicLongArray admitted;
    private final AtomicLong errors;
    private final long[][] latencies;
    private final CountDownLatch done;
    private long[] own = new long[1 << 14];
    private int n;
    private long i;
    private int key;
    private long started;
    private RateLimitResponse answer;

    Stream(RateLimitServiceGrpc.RateLimitServiceStub stub, String run, int index, long deadline,
        AtomicLongArray sent, AtomicLongArray admitted, AtomicLong errors, long[][] latencies, CountDownLatch done) {
      this.stub = stub;
      this.run = run;
      this.index = index;
      this.deadline = deadline;
      this.sent = sent;
      this.admitted = admitted;
      this.errors = errors;
      this.latencies = latencies;
      this.done = done;
      this.i = index;
    }

    void next() {
      if (System.nanoTime() >= deadline) {
        latencies[index] = Arrays.copyOf(own, n);
        done.countDown();
        return;
      }
      key = (int) (i % KEYS);
      i += STREAMS;
      answer = null;
      started = System.nanoTime();
      stub.withDeadlineAfter(30, TimeUnit.SECONDS).shouldRateLimit(RateLimitRequest.newBuilder().setDomain("load")
          .addDescriptors(d("client", run + ":" + key)).build(), this);
    }

    @Override
    public void onNext(RateLimitResponse value) {
      answer = value;
    }

    @Override
    public void onError(Throwable t) {
      errors.incrementAndGet();
      next();
    }

    @Override
    public void onCompleted() {
      long took = System.nanoTime() - started;
      if (answer == null || !answer.getStatuses(0).hasDurationUntilReset()) { // degraded: not decided by Redis
        errors.incrementAndGet();
      } else {
        sent.incrementAndGet(key);
        if (answer.getOverallCode() == RateLimitResponse.Code.OK) {
          admitted.incrementAndGet(key);
        }
        if (n == own.length) {
          own = Arrays.copyOf(own, n * 2);
        }
        own[n++] = took;
      }
      next();
    }
  }

  private static void report(String row) throws IOException {
    LoadReport.append("ShouldRateLimit (gRPC)",
        "| backend | streams | keys | seconds | requests | requests/s | p50 ms | p99 ms | p99.9 ms | errors |\n"
        + "|---|---|---|---|---|---|---|---|---|---|\n", row);
  }
}

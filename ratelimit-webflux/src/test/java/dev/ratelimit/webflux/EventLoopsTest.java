package dev.ratelimit.webflux;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * A backend's answer is signalled back on the event loop that subscribed: an exchange that ends on
 * another thread can stall a keep-alive connection on Reactor Netty (see {@link EventLoops}).
 */
class EventLoopsTest {
  private final EventLoop loop = new DefaultEventLoop();
  private final ExecutorService backend = Executors.newSingleThreadExecutor(r -> new Thread(r, "backend-io"));

  @AfterEach
  void stop() throws Exception {
    backend.shutdownNow();
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
  }

  /** The thread that sees {@code source}'s value, subscribed to on the event loop. */
  private String signalledOn(Mono<String> source) throws Exception {
    AtomicReference<String> seen = new AtomicReference<>();
    CompletableFuture<String> done = new CompletableFuture<>();
    loop.execute(() -> EventLoops.onSubscribingLoop(source)
        .doOnNext(v -> seen.set(Thread.currentThread().getName()))
        .subscribe(done::complete, done::completeExceptionally));
    assertThat(done.get(10, TimeUnit.SECONDS)).isEqualTo("answer");
    return seen.get();
  }

  private String loopThread() throws Exception {
    return loop.submit(() -> Thread.currentThread().getName()).get(10, TimeUnit.SECONDS);
  }

  @Test
  void anAnswerFromAnotherThreadComesBackToTheSubscribingLoop() throws Exception {
    Mono<String> remote = Mono.fromFuture(() -> CompletableFuture.supplyAsync(() -> "answer", backend));
    assertThat(signalledOn(remote)).isEqualTo(loopThread());
  }

  @Test
  void aTimerIsFollowedBackToTheLoopToo() throws Exception {
    Mono<String> delayed = Mono.delay(Duration.ofMillis(1)).thenReturn("answer");
    assertThat(signalledOn(delayed)).isEqualTo(loopThread());
  }

  @Test
  void anAnswerAlreadyThereStaysOnTheLoopWithoutAHop() throws Exception {
    assertThat(signalledOn(Mono.just("answer"))).isEqualTo(loopThread());
  }

  @Test
  void withoutASubscribingLoopTheAnswerStaysWhereItArrives() throws Exception {
    CompletableFuture<String> later = new CompletableFuture<>();
    AtomicReference<String> seen = new AtomicReference<>();
    CompletableFuture<String> done = new CompletableFuture<>();
    EventLoops.onSubscribingLoop(Mono.fromFuture(later))
        .doOnNext(v -> seen.set(Thread.currentThread().getName()))
        .subscribe(done::complete, done::completeExceptionally);
    backend.execute(() -> later.complete("answer")); // after the subscription, on the backend's thread
    assertThat(done.get(10, TimeUnit.SECONDS)).isEqualTo("answer");
    assertThat(seen.get()).isEqualTo("backend-io");
  }
}

package dev.ratelimit.webflux;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.util.ClassUtils;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Where a check that a remote backend answered on its own I/O thread resumes: the event loop the
 * request arrived on (or that subscribed), so the application's work and the end of the exchange
 * stay on the server's threads and the backend client's I/O threads are not held by them.
 *
 * <p>It is also a correctness matter on Reactor Netty 1.3.6 and older: an exchange whose handler
 * completes on another thread just after its response was flushed can leave an HTTP/1.1 keep-alive
 * connection no longer reading, so the client's next request on it waits forever
 * (reactor/reactor-netty#4347). Resuming on the connection's event loop removes that race.
 *
 * <p>For the library's reactive doors (the filter, {@code @RateLimited}, the gateway); not an API
 * for applications.
 */
public final class EventLoops {
  private static final boolean NETTY = ClassUtils.isPresent("io.netty.util.internal.ThreadExecutorMap",
      EventLoops.class.getClassLoader());
  private static final boolean REACTOR_NETTY = NETTY && ClassUtils.isPresent("reactor.netty.Connection",
      EventLoops.class.getClassLoader());

  private EventLoops() {}

  /** The request's event loop on Reactor Netty; elsewhere (or not found) Reactor's parallel scheduler. */
  static Scheduler of(ServerHttpRequest request) {
    if (REACTOR_NETTY) {
      Scheduler loop = OnReactorNetty.loop(ServerHttpRequestDecorator.getNativeRequest(request));
      if (loop != null) {
        return loop;
      }
    }
    return Schedulers.parallel();
  }

  /**
   * {@code source}, its value signalled on the Netty event loop that subscribed to it when it
   * arrives on another thread (a backend's I/O thread, a timer); as it is when it arrives on the
   * subscribing thread, or when no event loop subscribed.
   */
  public static <T> Mono<T> onSubscribingLoop(Mono<T> source) {
    return Mono.defer(() -> {
      Scheduler home = NETTY ? OnNetty.current() : null;
      if (home == null) {
        return source;
      }
      Thread subscriber = Thread.currentThread();
      return source.flatMap(v -> Thread.currentThread() == subscriber ? Mono.just(v) : Mono.just(v).publishOn(home));
    });
  }

  /**
   * The stage {@code call} makes when subscribed (a check, a reservation or a settle, none
   * blocking) as a Mono: at once when it is done, else signalled on the Netty event loop that
   * subscribed (when one did).
   */
  public static <T> Mono<T> awaited(java.util.function.Supplier<? extends CompletionStage<T>> call) {
    return Mono.defer(() -> answer(call.get(), NETTY ? OnNetty.current() : null));
  }

  /** {@code stage} as a Mono: at once when it is done, else signalled on {@code home} (when not null). */
  static <T> Mono<T> answer(CompletionStage<T> stage, Scheduler home) {
    CompletableFuture<T> answer = stage.toCompletableFuture();
    Mono<T> mono = Mono.fromFuture(answer);
    return answer.isDone() || home == null ? mono : mono.publishOn(home);
  }

  /** Loaded only with Netty present. */
  private static final class OnNetty {
    static Scheduler current() {
      io.netty.util.concurrent.EventExecutor executor = io.netty.util.internal.ThreadExecutorMap.currentExecutor();
      return executor == null ? null : Schedulers.fromExecutor(executor);
    }
  }

  /** Loaded only with Reactor Netty present. */
  private static final class OnReactorNetty {
    static Scheduler loop(Object nativeRequest) {
      return nativeRequest instanceof reactor.netty.Connection connection
          ? Schedulers.fromExecutor(connection.channel().eventLoop()) : null;
    }
  }
}

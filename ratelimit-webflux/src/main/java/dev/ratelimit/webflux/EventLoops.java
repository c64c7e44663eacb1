package dev.ratelimit.webflux;

import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.util.ClassUtils;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The event loop a request arrived on, where a check that a remote backend answered on its own I/O
 * thread resumes: the application's work then stays on the server's threads, and the backend
 * client's I/O threads are not held by it. Reactor Netty only; elsewhere (or not found), Reactor's
 * parallel scheduler, which is non-blocking too.
 */
final class EventLoops {
  private static final boolean REACTOR_NETTY = ClassUtils.isPresent("reactor.netty.Connection",
      EventLoops.class.getClassLoader());

  private EventLoops() {}

  static Scheduler of(ServerHttpRequest request) {
    if (REACTOR_NETTY) {
      Scheduler loop = OnReactorNetty.loop(ServerHttpRequestDecorator.getNativeRequest(request));
      if (loop != null) {
        return loop;
      }
    }
    return Schedulers.parallel();
  }

  /** Loaded only with Reactor Netty present. */
  private static final class OnReactorNetty {
    static Scheduler loop(Object nativeRequest) {
      return nativeRequest instanceof reactor.netty.Connection connection
          ? Schedulers.fromExecutor(connection.channel().eventLoop()) : null;
    }
  }
}

package dev.ratelimit.service.envoy;

import dev.ratelimit.internal.LogThrottle;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A connection to the gRPC port that does not speak gRPC (a port scanner, an HTTP/1 probe, a
 * client built on another protocol): grpc-java logs each one at INFO with a 25-line stack trace.
 * Here it becomes one line, at most once a minute, naming the cause; what gRPC logs above INFO
 * passes as it is.
 */
final class GarbageConnections {
  /** grpc-netty's logger of failed connections (shaded), held so that its filter stays. */
  private static final Logger CONNECTIONS = Logger.getLogger(
      "io.grpc.netty.shaded.io.grpc.netty.NettyServerTransport.connections");
  private static final System.Logger LOG = System.getLogger(GrpcServer.class.getName());
  private static final LogThrottle THROTTLE = LogThrottle.perMinute();
  private static final java.util.concurrent.atomic.AtomicLong SEEN = new java.util.concurrent.atomic.AtomicLong();

  private GarbageConnections() {}

  /** Installs the filter; idempotent. */
  static synchronized void quiet() {
    if (CONNECTIONS.getFilter() != null) {
      return;
    }
    CONNECTIONS.setFilter(record -> {
      if (record.getLevel().intValue() > Level.INFO.intValue()) {
        return true;
      }
      SEEN.incrementAndGet();
      Throwable cause = record.getThrown();
      THROTTLE.warn(LOG, "garbage-connection", "a connection to the gRPC port failed before it spoke gRPC"
          + " (HTTP/2) and was closed: " + LogThrottle.sanitize(cause == null ? record.getMessage() : cause));
      return false;
    });
  }

  /** The filter's logger, for tests. */
  static Logger logger() {
    return CONNECTIONS;
  }

  /** How many failed connections the filter turned into (throttled) lines, for tests. */
  static long seen() {
    return SEEN.get();
  }
}

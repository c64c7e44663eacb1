package dev.ratelimit.service.envoy;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * The gRPC server, started and stopped with the application: the rate limit service and
 * {@code grpc.health.v1.Health}, which answers SERVING for the server ("") and for {@code
 * envoy.service.ratelimit.v3.RateLimitService} while it runs, and NOT_SERVING from the moment it
 * stops (calls in flight then get up to {@value #GRACE_SECONDS} s to finish).
 */
public final class GrpcServer implements SmartLifecycle {
  private static final Logger log = LoggerFactory.getLogger(GrpcServer.class);
  static final String SERVICE = "envoy.service.ratelimit.v3.RateLimitService";
  static final int GRACE_SECONDS = 5;

  private final String address;
  private final int configuredPort;
  private final BindableService service;
  private final HealthStatusManager health = new HealthStatusManager();
  private volatile Server server;

  GrpcServer(String address, int port, BindableService service) {
    this.address = address;
    this.configuredPort = port;
    this.service = service;
  }

  @Override
  public synchronized void start() {
    GarbageConnections.quiet(); // a connection that is not gRPC: one throttled line, not a stack trace each
    Server built = NettyServerBuilder.forAddress(new InetSocketAddress(address, configuredPort))
        .addService(service)
        .addService(health.getHealthService())
        .build();
    try {
      built.start();
    } catch (IOException e) {
      throw new UncheckedIOException("the gRPC server could not listen on " + address + ":" + configuredPort
          + " (ratelimit-service.grpc.address, ratelimit-service.grpc.port): " + e.getMessage(), e);
    }
    health.setStatus("", ServingStatus.SERVING);
    health.setStatus(SERVICE, ServingStatus.SERVING);
    server = built;
    log.info("Envoy rate limit service (gRPC) listening on {}:{}", address, built.getPort());
  }

  @Override
  public synchronized void stop() {
    Server running = server;
    if (running == null) {
      return;
    }
    health.enterTerminalState(); // NOT_SERVING: health checkers stop sending traffic
    running.shutdown();
    try {
      if (!running.awaitTermination(GRACE_SECONDS, TimeUnit.SECONDS)) {
        running.shutdownNow();
      }
    } catch (InterruptedException e) {
      running.shutdownNow();
      Thread.currentThread().interrupt();
    }
    server = null;
  }

  @Override
  public boolean isRunning() {
    return server != null;
  }

  /** The address the server listens on ({@code 127.0.0.1:port}), null when not running. */
  public java.net.SocketAddress listenAddress() {
    Server running = server;
    return running == null || running.getListenSockets().isEmpty() ? null : running.getListenSockets().get(0);
  }

  /** The port the server listens on (the free one picked when configured 0); -1 when not running. */
  public int port() {
    Server running = server;
    return running == null ? -1 : running.getPort();
  }
}

package dev.ratelimit.service.envoy;

import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/** A real gRPC client (Netty, plaintext) of the service's Envoy endpoint; every call has a deadline. */
public final class RlsClient implements AutoCloseable {
  private final ManagedChannel channel;

  public RlsClient(int port) {
    channel = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
  }

  /** A descriptor of key/value pairs: {@code d("remote_address", "10.0.0.1")}. */
  public static RateLimitDescriptor d(String... keyValues) {
    RateLimitDescriptor.Builder descriptor = RateLimitDescriptor.newBuilder();
    for (int i = 0; i < keyValues.length; i += 2) {
      descriptor.addEntries(RateLimitDescriptor.Entry.newBuilder().setKey(keyValues[i]).setValue(keyValues[i + 1]));
    }
    return descriptor.build();
  }

  public RateLimitResponse check(String domain, RateLimitDescriptor... descriptors) {
    return check(domain, 0, descriptors);
  }

  public RateLimitResponse check(String domain, int hitsAddend, RateLimitDescriptor... descriptors) {
    return check(RateLimitRequest.newBuilder().setDomain(domain).setHitsAddend(hitsAddend)
        .addAllDescriptors(Arrays.asList(descriptors)).build());
  }

  public RateLimitResponse check(RateLimitRequest request) {
    return RateLimitServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
        .shouldRateLimit(request);
  }

  public HealthCheckResponse.ServingStatus health(String service) {
    return HealthGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
        .check(HealthCheckRequest.newBuilder().setService(service).build()).getStatus();
  }

  @Override
  public void close() {
    channel.shutdownNow();
  }
}

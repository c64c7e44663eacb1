package dev.ratelimit.tck.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/** Free loopback ports for the servers the tests start. */
final class FreePorts {
  private static final String LOOPBACK = "127.0.0.1";
  /** A cluster node's bus port is its port plus this. */
  static final int CLUSTER_BUS_OFFSET = 10_000;

  private FreePorts() {}

  /** A free loopback port; for a cluster node, one whose bus port (+10000) is free as well. */
  static int freePort(boolean clusterNode) {
    for (int i = 0; i < 100; i++) {
      int p = bindable(0);
      if (!clusterNode) {
        return p;
      }
      int bus = p + CLUSTER_BUS_OFFSET;
      if (bus <= 65_535 && bindable(bus) == bus) {
        return p;
      }
    }
    throw new IllegalStateException("no free port P with P+" + CLUSTER_BUS_OFFSET + " free");
  }

  /** Binds {@code port} (0: any) on loopback and returns the port bound, or -1 if it is taken. */
  private static int bindable(int port) {
    try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getByName(LOOPBACK))) {
      return s.getLocalPort();
    } catch (IOException e) {
      if (port == 0) {
        throw new UncheckedIOException("cannot bind any loopback port", e);
      }
      return -1;
    }
  }
}

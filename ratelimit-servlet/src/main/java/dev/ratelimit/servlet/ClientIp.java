package dev.ratelimit.servlet;

import dev.ratelimit.internal.http.ForwardedClient;
import dev.ratelimit.internal.http.HttpEngine;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletRequestWrapper;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.function.Consumer;

/**
 * The client's IP address of a request, as a rate-limit key can trust it.
 *
 * <p>The peer ({@code request.getRemoteAddr()}) is the client, unless the peer is a trusted proxy
 * (inside one of the configured CIDRs). Only then are {@code X-Forwarded-For} and {@code Forwarded}
 * (RFC 7239 {@code for=}) read, right to left, skipping trusted hops: the first hop that is not
 * trusted is the client. If every hop is trusted, the leftmost one is.
 *
 * <p>The peer and the headers are read as the request arrived, so that these trusted proxies alone
 * decide, whatever else in the server believes forwarding headers: request wrappers are seen
 * through to the container's request (Spring's {@code ForwardedHeaderFilter}, Tomcat's {@code
 * RemoteIpFilter} and the like rewrite {@code getRemoteAddr()} and hide the headers in a wrapper),
 * and what {@link #recordArrival} recorded is read instead of the container's request (for a
 * server component that rewrites the request itself, such as Tomcat's {@code RemoteIpValve}).
 *
 * <ul>
 *   <li>A forged header from a peer that is not trusted changes nothing.</li>
 *   <li>An entry that is not an IP literal ({@code unknown}, an obfuscated {@code _id}, a host
 *       name, garbage) stops the walk, and the peer is the client: conservative, so junk never
 *       lands a request in a bucket of its choosing. Names are never resolved (no DNS).</li>
 *   <li>When both headers are present they must agree on the client; otherwise the peer is the
 *       client. (A proxy usually maintains one of them and passes the other through untouched, so
 *       disagreement means one of them was forged.)</li>
 *   <li>Ports are stripped ({@code 192.0.2.1:8080}, {@code "[2001:db8::1]:4711"}); addresses are
 *       printed canonically (RFC 5952 for IPv6, IPv4-mapped IPv6 as IPv4), so that one address has
 *       one key however it is spelled.</li>
 * </ul>
 *
 * <p>Thread-safe and immutable.
 */
public final class ClientIp {
  private final ForwardedClient client;

  /**
   * A resolver trusting the proxies in {@code trustedProxyCidrs}: IPv4 or IPv6 networks such as
   * {@code 10.0.0.0/8}, {@code 2001:db8::/32}, {@code ::1/128}, or single addresses. An empty list
   * trusts no proxy: the peer is always the client.
   *
   * @throws IllegalArgumentException naming an entry that is not a network
   */
  public ClientIp(List<String> trustedProxyCidrs) {
    this.client = new ForwardedClient(trustedProxyCidrs);
  }

  /** The request attribute holding an {@link Arrival}; its type is private, so nobody else makes one. */
  private static final String ARRIVAL = ClientIp.class.getName() + ".arrival";

  /**
   * Records the peer address and the forwarding headers of {@code request} as they are now, for
   * {@link #resolve} to read in place of what they become. Call it before a server component that
   * rewrites the request itself, without a wrapper: a Tomcat valve placed before {@code
   * RemoteIpValve}, say (the Spring Boot starter installs one). The first record of a request
   * stays; later calls change nothing.
   */
  public static void recordArrival(HttpServletRequest request) {
    if (!(request.getAttribute(ARRIVAL) instanceof Arrival)) {
      request.setAttribute(ARRIVAL, Arrival.of(request));
    }
  }

  /**
   * The peer address and forwarding header lines (null when absent) of a request as it arrived.
   *
   * @param remoteAddr the peer
   * @param forwardedFor the {@code X-Forwarded-For} lines
   * @param forwarded the {@code Forwarded} lines
   */
  private record Arrival(String remoteAddr, List<String> forwardedFor, List<String> forwarded) {
    static Arrival of(HttpServletRequest request) {
      return new Arrival(request.getRemoteAddr(), lines(request, "X-Forwarded-For"), lines(request, "Forwarded"));
    }
  }

  /** What {@link #recordArrival} recorded, else the container's request under any wrappers. */
  private static Arrival arrival(HttpServletRequest request) {
    if (request.getAttribute(ARRIVAL) instanceof Arrival recorded) {
      return recorded;
    }
    HttpServletRequest received = request;
    ServletRequest inner = request;
    while (inner instanceof ServletRequestWrapper wrapper) {
      inner = wrapper.getRequest();
      if (inner instanceof HttpServletRequest http) {
        received = http;
      }
    }
    return Arrival.of(received);
  }

  /**
   * The client address of {@code request}, canonically printed. When the peer address is not an
   * IP literal at all (a Unix socket, say), it is returned as the container gives it.
   */
  public String resolve(HttpServletRequest request) {
    return resolve(request, (Consumer<String>) null);
  }

  /**
   * {@link #resolve(HttpServletRequest)}, telling {@code ignoredForwarding} (when not null) the
   * peer's address when the peer is not trusted but is on a local network (loopback, private, link-local) and
   * sent {@code X-Forwarded-For} or {@code Forwarded}: most likely a proxy in front of the
   * application that nobody declared trusted, so that every client behind it has its address.
   */
  String resolve(HttpServletRequest request, Consumer<String> ignoredForwarding) {
    Arrival arrival = arrival(request);
    return client.resolve(arrival.remoteAddr(), arrival.forwardedFor(), arrival.forwarded(), ignoredForwarding);
  }

  /**
   * The client address of {@code request} behind {@code engine}'s trusted proxies, which warns
   * (at most once a minute) of a local peer's forwarding headers that it did not believe.
   */
  static String resolve(HttpServletRequest request, HttpEngine engine) {
    Arrival arrival = arrival(request);
    return engine.clientIp(arrival.remoteAddr(), arrival.forwardedFor(), arrival.forwarded());
  }

  /**
   * The network of a client address as {@link #resolve} gives it, for per-client limits over IPv6,
   * where one client usually holds a whole {@code /64}: an IPv6 address masked to its first 64 bits
   * and written with the prefix ({@code 2001:db8:1:2::/64} for {@code 2001:db8:1:2::7}); an IPv4
   * address as it is (so a key moved from the address to the network keeps every IPv4 client's
   * bucket), as are the IPv6 addresses whose {@code /64} is not one client's (an IPv4 client behind
   * NAT64 or Teredo, loopback, link-local), written canonically; anything
   * that is not an IP literal unchanged. This is {@code #clientNetwork} in expressions.
   */
  public static String network(String clientIp) {
    return ForwardedClient.network(clientIp);
  }

  private static List<String> lines(HttpServletRequest request, String name) {
    Enumeration<String> values = request.getHeaders(name);
    if (values == null || !values.hasMoreElements()) {
      return null;
    }
    return Collections.list(values);
  }

  @Override
  public String toString() {
    return "ClientIp[" + client + "]";
  }
}

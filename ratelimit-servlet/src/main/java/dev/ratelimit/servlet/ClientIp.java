package dev.ratelimit.servlet;

import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletRequestWrapper;
import jakarta.servlet.http.HttpServletRequest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
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
  /**
   * The networks a load balancer, ingress or reverse proxy in front of an application usually has
   * its address in: loopback, private (RFC 1918), shared (RFC 6598), link-local, unique local.
   */
  private static final List<InetLiterals.Cidr> LOCAL = java.util.stream.Stream.of("127.0.0.0/8",
      "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16", "::1/128",
      "fc00::/7", "fe80::/10").map(InetLiterals.Cidr::parse).toList();

  private final List<InetLiterals.Cidr> trusted;

  /**
   * A resolver trusting the proxies in {@code trustedProxyCidrs}: IPv4 or IPv6 networks such as
   * {@code 10.0.0.0/8}, {@code 2001:db8::/32}, {@code ::1/128}, or single addresses. An empty list
   * trusts no proxy: the peer is always the client.
   *
   * @throws IllegalArgumentException naming an entry that is not a network
   */
  public ClientIp(List<String> trustedProxyCidrs) {
    Objects.requireNonNull(trustedProxyCidrs, "trustedProxyCidrs");
    List<InetLiterals.Cidr> cidrs = new ArrayList<>(trustedProxyCidrs.size());
    for (String cidr : trustedProxyCidrs) {
      cidrs.add(InetLiterals.Cidr.parse(cidr));
    }
    this.trusted = List.copyOf(cidrs);
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
    return resolve(request, null);
  }

  /**
   * {@link #resolve(HttpServletRequest)}, telling {@code ignoredForwarding} (when not null) the
   * peer's address when the peer is not trusted but is on a local network (see {@link #LOCAL}) and
   * sent {@code X-Forwarded-For} or {@code Forwarded}: most likely a proxy in front of the
   * application that nobody declared trusted, so that every client behind it has its address.
   */
  String resolve(HttpServletRequest request, Consumer<String> ignoredForwarding) {
    Arrival arrival = arrival(request);
    String remote = arrival.remoteAddr();
    byte[] peer = InetLiterals.parseNode(remote);
    if (peer == null) {
      return remote;
    }
    if (!isTrusted(peer)) {
      String client = InetLiterals.format(peer);
      if (ignoredForwarding != null && isLocal(peer)
          && (arrival.forwardedFor() != null || arrival.forwarded() != null)) {
        ignoredForwarding.accept(client);
      }
      return client;
    }
    List<String> xff = forwardedFor(arrival.forwardedFor());
    List<String> forwarded = forwarded(arrival.forwarded());
    byte[] fromXff = xff == null ? null : walk(xff, peer);
    byte[] fromForwarded = forwarded == null ? null : walk(forwarded, peer);
    byte[] client;
    if (xff == null && forwarded == null) {
      client = peer;
    } else if (xff == null) {
      client = fromForwarded;
    } else if (forwarded == null) {
      client = fromXff;
    } else {
      client = fromXff != null && fromForwarded != null
          && java.util.Arrays.equals(fromXff, fromForwarded) ? fromXff : null;
    }
    return InetLiterals.format(client == null ? peer : client);
  }

  /**
   * IPv6 addresses that are not grouped by {@code /64} in {@link #network}: IPv4-compatible
   * ({@code ::/96}, which holds loopback and unspecified too), NAT64 ({@code 64:ff9b::/96},
   * {@code 64:ff9b:1::/48}) and Teredo ({@code 2001::/32}), which carry an IPv4 client in their low
   * bits, and link-local ({@code fe80::/10}), where every host of a link shares one {@code /64}.
   */
  private static final List<InetLiterals.Cidr> UNGROUPED = java.util.stream.Stream.of("::/96",
      "64:ff9b::/96", "64:ff9b:1::/48", "2001::/32", "fe80::/10").map(InetLiterals.Cidr::parse).toList();

  /**
   * The network of a client address as {@link #resolve} gives it, for per-client limits over IPv6,
   * where one client usually holds a whole {@code /64}: an IPv6 address masked to its first 64 bits
   * and written with the prefix ({@code 2001:db8:1:2::/64} for {@code 2001:db8:1:2::7}); an IPv4
   * address as it is (so a key moved from the address to the network keeps every IPv4 client's
   * bucket), as are the IPv6 addresses whose {@code /64} is not one client's (an IPv4 client behind
   * NAT64 or Teredo, loopback, link-local: see {@link #UNGROUPED}), written canonically; anything
   * that is not an IP literal unchanged. This is {@code #clientNetwork} in expressions.
   */
  public static String network(String clientIp) {
    if (clientIp == null || clientIp.indexOf(':') < 0) {
      return clientIp; // IPv4 as resolve writes it, or not an address
    }
    byte[] address = InetLiterals.parseNode(clientIp);
    if (address == null) {
      return clientIp;
    }
    if (address.length == 4 || contains(UNGROUPED, address)) {
      return InetLiterals.format(address);
    }
    java.util.Arrays.fill(address, 8, 16, (byte) 0);
    return InetLiterals.format(address) + "/64";
  }

  /** Whether {@code address} is inside one of the trusted networks. */
  boolean isTrusted(byte[] address) {
    return contains(trusted, address);
  }

  private static boolean isLocal(byte[] address) {
    return contains(LOCAL, address);
  }

  private static boolean contains(List<InetLiterals.Cidr> networks, byte[] address) {
    for (InetLiterals.Cidr cidr : networks) {
      if (cidr.contains(address)) {
        return true;
      }
    }
    return false;
  }

  /** Walks the hops right to left from a trusted peer; null when an entry is not an address. */
  private byte[] walk(List<String> hops, byte[] peer) {
    byte[] current = peer;
    for (int i = hops.size() - 1; i >= 0; i--) {
      byte[] hop = InetLiterals.parseNode(hops.get(i));
      if (hop == null) {
        return null;
      }
      if (!isTrusted(hop)) {
        return hop;
      }
      current = hop;
    }
    return current;
  }

  /** The {@code X-Forwarded-For} entries of all its {@code lines} in order, or null when absent. */
  private static List<String> forwardedFor(List<String> lines) {
    if (lines == null) {
      return null;
    }
    List<String> hops = new ArrayList<>();
    for (String line : lines) {
      for (String entry : line.split(",", -1)) {
        hops.add(entry.trim());
      }
    }
    return hops;
  }

  /**
   * The {@code for=} values of the {@code Forwarded} elements of all its {@code lines} in order (a
   * null entry for an element without {@code for}), or null when the header is absent.
   */
  private static List<String> forwarded(List<String> lines) {
    if (lines == null) {
      return null;
    }
    List<String> hops = new ArrayList<>();
    for (String line : lines) {
      for (String element : split(line, ',')) {
        String node = null;
        for (String pair : split(element, ';')) {
          int eq = pair.indexOf('=');
          if (eq > 0 && pair.substring(0, eq).trim().toLowerCase(Locale.ROOT).equals("for")) {
            node = unquote(pair.substring(eq + 1).trim());
            break;
          }
        }
        hops.add(node);
      }
    }
    return hops;
  }

  private static List<String> lines(HttpServletRequest request, String name) {
    Enumeration<String> values = request.getHeaders(name);
    if (values == null || !values.hasMoreElements()) {
      return null;
    }
    return Collections.list(values);
  }

  /** Splits on {@code separator} outside quoted strings (RFC 7230 quoted-string with escapes). */
  private static List<String> split(String s, char separator) {
    List<String> parts = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    boolean quoted = false;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (quoted && c == '\\' && i + 1 < s.length()) {
        current.append(c).append(s.charAt(++i));
        continue;
      }
      if (c == '"') {
        quoted = !quoted;
      } else if (c == separator && !quoted) {
        parts.add(current.toString());
        current.setLength(0);
        continue;
      }
      current.append(c);
    }
    parts.add(current.toString());
    return parts;
  }

  private static String unquote(String value) {
    if (value.length() < 2 || value.charAt(0) != '"' || value.charAt(value.length() - 1) != '"') {
      return value;
    }
    StringBuilder sb = new StringBuilder(value.length());
    for (int i = 1; i < value.length() - 1; i++) {
      char c = value.charAt(i);
      if (c == '\\' && i + 1 < value.length() - 1) {
        c = value.charAt(++i);
      }
      sb.append(c);
    }
    return sb.toString();
  }

  @Override
  public String toString() {
    return "ClientIp[trusted=" + trusted + "]";
  }
}

package dev.ratelimit.internal.http;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The client's IP address behind trusted proxies, from the peer address and the forwarding header
 * lines of a request, whatever carries them (a servlet request, a reactive exchange). The peer is
 * the client unless it is inside one of the trusted CIDRs; only then are {@code X-Forwarded-For}
 * and {@code Forwarded} ({@code for=}) read, right to left, skipping trusted hops. See {@code
 * dev.ratelimit.servlet.ClientIp} for the rules; this is their one implementation.
 *
 * <p>Thread-safe and immutable.
 */
public final class ForwardedClient {
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
  public ForwardedClient(List<String> trustedProxyCidrs) {
    Objects.requireNonNull(trustedProxyCidrs, "trustedProxyCidrs");
    List<InetLiterals.Cidr> cidrs = new ArrayList<>(trustedProxyCidrs.size());
    for (String cidr : trustedProxyCidrs) {
      cidrs.add(InetLiterals.Cidr.parse(cidr));
    }
    this.trusted = List.copyOf(cidrs);
  }

  /**
   * The client address of a request from {@code remoteAddr} carrying the {@code X-Forwarded-For}
   * lines {@code forwardedFor} and the {@code Forwarded} lines {@code forwarded} (each null when
   * absent), canonically printed; telling {@code ignoredForwarding} (when not null) the peer's
   * address when the peer is not trusted but is on a local network and sent either header: most
   * likely a proxy in front of the application that nobody declared trusted. When the peer address
   * is not an IP literal at all (a Unix socket, say), it is returned as given.
   */
  public String resolve(String remoteAddr, List<String> forwardedFor, List<String> forwarded,
      Consumer<String> ignoredForwarding) {
    String remote = remoteAddr;
    byte[] peer = InetLiterals.parseNode(remote);
    if (peer == null) {
      return remote;
    }
    if (!isTrusted(peer)) {
      String client = InetLiterals.format(peer);
      if (ignoredForwarding != null && isLocal(peer) && (forwardedFor != null || forwarded != null)) {
        ignoredForwarding.accept(client);
      }
      return client;
    }
    List<String> xff = forwardedFor(forwardedFor);
    List<String> fwd = forwarded(forwarded);
    byte[] fromXff = xff == null ? null : walk(xff, peer);
    byte[] fromForwarded = fwd == null ? null : walk(fwd, peer);
    byte[] client;
    if (xff == null && fwd == null) {
      client = peer;
    } else if (xff == null) {
      client = fromForwarded;
    } else if (fwd == null) {
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
    return "ForwardedClient[trusted=" + trusted + "]";
  }
}

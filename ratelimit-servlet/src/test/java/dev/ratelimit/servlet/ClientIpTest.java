package dev.ratelimit.servlet;

import dev.ratelimit.internal.http.InetLiterals;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ClientIpTest {
  private static final ClientIp TRUSTING = new ClientIp(List.of("10.0.0.0/8", "127.0.0.1", "2001:db8:ffff::/48", "::1/128"));
  private static final ClientIp NONE = new ClientIp(List.of());

  private static String resolve(ClientIp ip, String peer, String... headers) {
    return ip.resolve(Stubs.request(peer, headers));
  }

  @Test
  void thePeerIsTheClientWhenItIsNotTrusted() {
    assertThat(resolve(NONE, "192.0.2.1")).isEqualTo("192.0.2.1");
    assertThat(resolve(NONE, "192.0.2.1", "X-Forwarded-For", "203.0.113.7")).isEqualTo("192.0.2.1");
    assertThat(resolve(NONE, "192.0.2.1", "Forwarded", "for=203.0.113.7")).isEqualTo("192.0.2.1");
    // a peer outside the trusted networks, even one that looks internal
    assertThat(resolve(TRUSTING, "11.0.0.1", "X-Forwarded-For", "203.0.113.7")).isEqualTo("11.0.0.1");
    assertThat(resolve(TRUSTING, "2001:db8:fffe::1", "Forwarded", "for=203.0.113.7")).isEqualTo("2001:db8:fffe::1");
  }

  @Test
  void aLocalPeerWhoseForwardingIsIgnoredIsReported() {
    List<String> reported = new java.util.ArrayList<>();
    ClientIp trusting = new ClientIp(List.of("10.0.0.0/8"));
    // local peers that are not trusted, with forwarding headers: a proxy nobody declared
    assertThat(trusting.resolve(Stubs.request("192.168.1.5", "X-Forwarded-For", "203.0.113.7"), reported::add))
        .isEqualTo("192.168.1.5");
    NONE.resolve(Stubs.request("127.0.0.1", "Forwarded", "for=203.0.113.7"), reported::add);
    NONE.resolve(Stubs.request("100.64.3.4", "X-Forwarded-For", "203.0.113.7"), reported::add);
    NONE.resolve(Stubs.request("fd00::7", "X-Forwarded-For", "203.0.113.7"), reported::add);
    assertThat(reported).containsExactly("192.168.1.5", "127.0.0.1", "100.64.3.4", "fd00::7");
    // not reported: a public peer (a client sending the header itself), no header, a trusted peer
    NONE.resolve(Stubs.request("192.0.2.1", "X-Forwarded-For", "203.0.113.7"), reported::add);
    NONE.resolve(Stubs.request("192.168.1.5"), reported::add);
    trusting.resolve(Stubs.request("10.1.2.3", "X-Forwarded-For", "203.0.113.7"), reported::add);
    assertThat(reported).hasSize(4);
  }

  @Test
  void wrappersAreSeenThroughToThePeerAndHeadersAsTheyArrived() {
    HttpServletRequest arrived = Stubs.request("127.0.0.1", "X-Forwarded-For", "203.0.113.7, 10.0.0.2");
    // as Spring's ForwardedHeaderFilter or Tomcat's RemoteIpFilter leave it: another peer, no header
    HttpServletRequest rewritten = new HttpServletRequestWrapper(new HttpServletRequestWrapper(arrived) {
      @Override
      public String getRemoteAddr() {
        return "198.51.100.1";
      }

      @Override
      public String getHeader(String name) {
        return null;
      }

      @Override
      public java.util.Enumeration<String> getHeaders(String name) {
        return java.util.Collections.emptyEnumeration();
      }
    });
    assertThat(NONE.resolve(rewritten)).isEqualTo("127.0.0.1");
    assertThat(TRUSTING.resolve(rewritten)).isEqualTo("203.0.113.7");
    List<String> reported = new java.util.ArrayList<>();
    NONE.resolve(rewritten, reported::add);
    assertThat(reported).containsExactly("127.0.0.1");
  }

  @Test
  void theRecordedArrivalIsReadInsteadOfWhatTheServerMadeOfTheRequest() {
    Map<String, Object> attributes = new HashMap<>();
    HttpServletRequest arrived = Stubs.request(attributes, "127.0.0.1", "X-Forwarded-For", "203.0.113.7",
        "Forwarded", "for=203.0.113.7");
    ClientIp.recordArrival(arrived);
    // as Tomcat's RemoteIpValve leaves it: the address taken from X-Forwarded-For, which is removed
    HttpServletRequest rewritten = Stubs.request(attributes, "203.0.113.7", "Forwarded", "for=203.0.113.7");
    ClientIp.recordArrival(rewritten); // the first record stays
    assertThat(NONE.resolve(rewritten)).isEqualTo("127.0.0.1");
    assertThat(TRUSTING.resolve(rewritten)).isEqualTo("203.0.113.7");
    List<String> reported = new java.util.ArrayList<>();
    NONE.resolve(rewritten, reported::add);
    assertThat(reported).containsExactly("127.0.0.1");
    // an attribute of that name set by anything else is not a record
    HttpServletRequest other = Stubs.request(new HashMap<>(Map.of(ClientIp.class.getName() + ".arrival", "10.0.0.1")),
        "192.0.2.1");
    assertThat(TRUSTING.resolve(other)).isEqualTo("192.0.2.1");
  }

  @Test
  void theNetworkOfAnIpv6ClientIsItsSlash64AndOfAnIpv4ClientItsAddress() {
    assertThat(ClientIp.network("2001:db8:1:2:3:4:5:6")).isEqualTo("2001:db8:1:2::/64");
    assertThat(ClientIp.network("2001:db8::1")).isEqualTo("2001:db8::/64");
    assertThat(ClientIp.network(resolve(NONE, "2001:DB8:1:2:0:0:0:9"))).isEqualTo("2001:db8:1:2::/64");
    assertThat(ClientIp.network("192.0.2.1")).isEqualTo("192.0.2.1");
    assertThat(ClientIp.network("::ffff:192.0.2.1")).as("IPv4-mapped: IPv4").isEqualTo("192.0.2.1");
    // whose /64 is not one client's: written canonically, not grouped
    assertThat(ClientIp.network("64:FF9B::C000:201")).as("NAT64: an IPv4 client").isEqualTo("64:ff9b::c000:201");
    assertThat(ClientIp.network("64:ff9b:1::a00:1")).isEqualTo("64:ff9b:1::a00:1");
    assertThat(ClientIp.network("2001:0:4136:e378:8000:63bf:3fff:fdd2")).as("Teredo")
        .isEqualTo("2001:0:4136:e378:8000:63bf:3fff:fdd2");
    assertThat(ClientIp.network("::c000:201")).as("IPv4-compatible").isEqualTo("::c000:201");
    assertThat(ClientIp.network("::1")).as("loopback").isEqualTo("::1");
    assertThat(ClientIp.network("fe80::1")).as("link-local").isEqualTo("fe80::1");
    assertThat(ClientIp.network("not an address")).isEqualTo("not an address");
    assertThat(ClientIp.network(null)).isNull();
  }

  @Test
  void xForwardedForIsReadRightToLeftSkippingTrustedHops() {
    assertThat(resolve(TRUSTING, "127.0.0.1", "X-Forwarded-For", "203.0.113.7, 10.0.0.2")).isEqualTo("203.0.113.7");
    assertThat(resolve(TRUSTING, "10.1.1.1", "X-Forwarded-For", "198.51.100.9, 203.0.113.7, 10.0.0.2, 10.0.0.3"))
        .isEqualTo("203.0.113.7");
    // the client's own forged entries sit left of the real one, and are never reached
    assertThat(resolve(TRUSTING, "10.1.1.1", "X-Forwarded-For", "1.1.1.1, 2.2.2.2, 203.0.113.7")).isEqualTo("203.0.113.7");
    // several header lines are one list, in order
    assertThat(resolve(TRUSTING, "10.1.1.1", "X-Forwarded-For", "203.0.113.7", "X-Forwarded-For", "10.0.0.5"))
        .isEqualTo("203.0.113.7");
    // every hop trusted: the leftmost is the client
    assertThat(resolve(TRUSTING, "10.1.1.1", "X-Forwarded-For", "10.0.0.9, 10.0.0.5")).isEqualTo("10.0.0.9");
    // ports are stripped
    assertThat(resolve(TRUSTING, "10.1.1.1", "X-Forwarded-For", "203.0.113.7:51234")).isEqualTo("203.0.113.7");
    assertThat(resolve(TRUSTING, "10.1.1.1", "X-Forwarded-For", "[2001:db8::7]:443")).isEqualTo("2001:db8::7");
    assertThat(resolve(TRUSTING, "10.1.1.1", "X-Forwarded-For", "2001:db8::7")).isEqualTo("2001:db8::7");
  }

  @Test
  void forwardedIsReadRightToLeftWithQuotedIpv6AndPorts() {
    assertThat(resolve(TRUSTING, "127.0.0.1", "Forwarded", "for=\"[2001:db8::1]:4711\"")).isEqualTo("2001:db8::1");
    assertThat(resolve(TRUSTING, "127.0.0.1", "Forwarded",
        "for=192.0.2.60;proto=http;by=203.0.113.43, for=\"203.0.113.7:8080\";proto=https, For=10.0.0.4"))
        .isEqualTo("203.0.113.7");
    assertThat(resolve(TRUSTING, "127.0.0.1", "Forwarded", "proto=https;for=\"[2001:db8:cafe::17]\"")).isEqualTo("2001:db8:cafe::17");
    // a quoted comma or semicolon does not split
    assertThat(resolve(TRUSTING, "127.0.0.1", "Forwarded", "for=203.0.113.7;host=\"a,b;c\"")).isEqualTo("203.0.113.7");
    // IPv6 trusted hops
    assertThat(resolve(TRUSTING, "::1", "Forwarded", "for=198.51.100.3, for=\"[2001:db8:ffff::9]\"")).isEqualTo("198.51.100.3");
  }

  @ParameterizedTest
  @ValueSource(strings = {"unknown", "_hidden", "proxy.example.com", "", "300.1.1.1", "1.2.3", "01.2.3.4",
      "1.2.3.4:99999", "[2001:db8::1", "2001:db8::1::2", "<script>"})
  void anInvalidHopStopsTheWalkAndThePeerIsTheClient(String bad) {
    assertThat(resolve(TRUSTING, "10.0.0.1", "X-Forwarded-For", "203.0.113.7, " + bad)).isEqualTo("10.0.0.1");
    assertThat(resolve(TRUSTING, "10.0.0.1", "Forwarded", "for=203.0.113.7, for=\"" + bad + "\"")).isEqualTo("10.0.0.1");
  }

  @Test
  void aForwardedElementWithoutForIsInvalid() {
    assertThat(resolve(TRUSTING, "10.0.0.1", "Forwarded", "for=203.0.113.7, proto=https")).isEqualTo("10.0.0.1");
  }

  @Test
  void bothHeadersMustAgree() {
    assertThat(resolve(TRUSTING, "10.0.0.1", "X-Forwarded-For", "203.0.113.7", "Forwarded", "for=203.0.113.7"))
        .isEqualTo("203.0.113.7");
    // a proxy that maintains one header passes a forged other one through: disagreement, the peer
    assertThat(resolve(TRUSTING, "10.0.0.1", "X-Forwarded-For", "203.0.113.7", "Forwarded", "for=198.51.100.1"))
        .isEqualTo("10.0.0.1");
  }

  @Test
  void addressesAreCanonical() {
    assertThat(resolve(NONE, "2001:DB8:0:0:0:0:0:1")).isEqualTo("2001:db8::1");
    assertThat(resolve(NONE, "0:0:0:0:0:0:0:1")).isEqualTo("::1");
    assertThat(resolve(NONE, "[::1]")).isEqualTo("::1");
    assertThat(resolve(NONE, "::ffff:192.0.2.1")).isEqualTo("192.0.2.1");
    assertThat(resolve(NONE, "fe80::1%eth0")).isEqualTo("fe80::1");
    assertThat(resolve(NONE, "2001:db8:0:1:0:0:0:1")).isEqualTo("2001:db8:0:1::1");
    assertThat(resolve(NONE, "2001:0:0:1:0:0:0:1")).isEqualTo("2001:0:0:1::1"); // the first longest run
    assertThat(resolve(NONE, "1:0:1:1:1:1:1:1")).isEqualTo("1:0:1:1:1:1:1:1"); // one zero group stays
    assertThat(resolve(TRUSTING, "::ffff:10.0.0.1", "X-Forwarded-For", "203.0.113.7")).isEqualTo("203.0.113.7");
    // a peer that is no address at all is returned as the container gave it
    assertThat(resolve(TRUSTING, "unix:/run/app.sock", "X-Forwarded-For", "203.0.113.7")).isEqualTo("unix:/run/app.sock");
  }

  @ParameterizedTest
  @CsvSource({
      "10.0.0.0/8, 10.255.255.255, true",
      "10.0.0.0/8, 11.0.0.0, false",
      "192.168.1.1/24, 192.168.1.200, true",
      "0.0.0.0/0, 203.0.113.7, true",
      "0.0.0.0/0, 2001:db8::1, false",
      "203.0.113.7, 203.0.113.7, true",
      "203.0.113.7, 203.0.113.8, false",
      "10.0.0.0/9, 10.128.0.0, false",
      "2001:db8::/32, 2001:db8:ffff::1, true",
      "2001:db8::/32, 2001:db9::1, false",
      "::/0, ::1, true",
      "::1/128, ::1, true",
      "::ffff:10.0.0.0/104, 10.9.9.9, true",
      "fe80::/10, febf::1, true",
      "fe80::/10, fec0::1, false",
  })
  void cidrs(String cidr, String address, boolean inside) {
    assertThat(InetLiterals.Cidr.parse(cidr).contains(InetLiterals.parse(address))).isEqualTo(inside);
  }

  @ParameterizedTest
  @ValueSource(strings = {"10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/-1", "10.0.0/8", "localhost",
      "example.com/24", "::ffff:10.0.0.0/95", " ", "10.0.0.0/8/8"})
  void badCidrsAreRefusedNamingTheEntry(String cidr) {
    assertThatThrownBy(() -> new ClientIp(List.of("10.0.0.0/8", cidr)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'" + cidr + "'");
  }

  @Test
  void literalParsing() {
    assertThat(InetLiterals.parse("255.255.255.255")).hasSize(4);
    assertThat(InetLiterals.parse("0.0.0.0")).hasSize(4);
    assertThat(InetLiterals.parse("1:2:3:4:5:6:7:8")).hasSize(16);
    assertThat(InetLiterals.parse("::")).hasSize(16);
    assertThat(InetLiterals.parse("1::")).hasSize(16);
    assertThat(InetLiterals.parse("::2:3.4.5.6")).hasSize(16);
    assertThat(InetLiterals.parse("1:2:3:4:5:6:7:8:9")).isNull();
    assertThat(InetLiterals.parse("1:2:3:4:5:6:7::8")).isNull(); // :: must stand for at least one group
    assertThat(InetLiterals.parse("12345::")).isNull();
    assertThat(InetLiterals.parse("g::1")).isNull();
    assertThat(InetLiterals.parse("１.２.３.４")).isNull(); // full-width digits
    assertThat(InetLiterals.parse("1.2.3.4.")).isNull();
    assertThat(InetLiterals.parse("1.2.3.04")).isNull();
  }
}

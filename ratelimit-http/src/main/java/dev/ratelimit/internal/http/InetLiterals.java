package dev.ratelimit.internal.http;

import java.util.Arrays;
import java.util.Locale;

/**
 * IPv4 and IPv6 address literals, parsed and printed without {@link java.net.InetAddress}, so that
 * nothing ever triggers a DNS lookup: a string is an address or it is nothing.
 *
 * <p>Addresses are 4 or 16 bytes; an IPv4-mapped IPv6 address ({@code ::ffff:192.0.2.1}) is
 * returned as its 4 IPv4 bytes, so that one client never has two spellings. {@link #format}
 * prints the canonical text (RFC 5952 for IPv6), so two spellings of one address give one key.
 */
public final class InetLiterals {
  private InetLiterals() {}

  /**
   * Parses a literal without brackets or port: {@code 192.0.2.1}, {@code 2001:db8::1},
   * {@code fe80::1%eth0} (the zone is dropped). Returns null for anything else, names included.
   */
  public static byte[] parse(String text) {
    if (text == null || text.isEmpty() || text.length() > 64) {
      return null;
    }
    if (text.indexOf(':') < 0) {
      return parseV4(text);
    }
    int zone = text.indexOf('%');
    if (zone >= 0) {
      if (zone == text.length() - 1) {
        return null;
      }
      text = text.substring(0, zone);
    }
    byte[] v6 = parseV6(text);
    if (v6 != null && isV4Mapped(v6)) {
      return Arrays.copyOfRange(v6, 12, 16);
    }
    return v6;
  }

  /**
   * Parses a node as found in {@code X-Forwarded-For}, {@code Forwarded: for=} or
   * {@code getRemoteAddr()}: a literal, optionally with a port ({@code 192.0.2.1:8080},
   * {@code [2001:db8::1]:4711}) or in brackets ({@code [2001:db8::1]}). Null when it is not one.
   */
  public static byte[] parseNode(String node) {
    if (node == null) {
      return null;
    }
    String s = node.trim();
    if (s.startsWith("[")) {
      int close = s.indexOf(']');
      if (close < 0 || !isPortSuffix(s, close + 1)) {
        return null;
      }
      String inner = s.substring(1, close);
      return inner.indexOf(':') < 0 ? null : parse(inner);
    }
    int firstColon = s.indexOf(':');
    if (firstColon >= 0 && firstColon == s.lastIndexOf(':')) {
      // one colon: IPv4 with a port
      if (!isPortSuffix(s, firstColon)) {
        return null;
      }
      return parseV4(s.substring(0, firstColon));
    }
    return parse(s);
  }

  /** Whether {@code s} ends at {@code from} or continues with {@code :digits} (a port) to the end. */
  private static boolean isPortSuffix(String s, int from) {
    if (from == s.length()) {
      return true;
    }
    int digits = s.length() - from - 1;
    if (s.charAt(from) != ':' || digits < 1 || digits > 5) {
      return false;
    }
    int port = 0;
    for (int i = from + 1; i < s.length(); i++) {
      if (!isDigit(s.charAt(i))) {
        return false;
      }
      port = port * 10 + (s.charAt(i) - '0');
    }
    return port <= 65_535;
  }

  /** Dotted quad, each part 0-255 in decimal without leading zeros (which some read as octal). */
  public static byte[] parseV4(String s) {
    byte[] out = new byte[4];
    int part = 0;
    int i = 0;
    int n = s.length();
    while (part < 4) {
      int start = i;
      int value = 0;
      while (i < n && isDigit(s.charAt(i)) && i - start < 3) {
        value = value * 10 + (s.charAt(i) - '0');
        i++;
      }
      int len = i - start;
      if (len == 0 || value > 255 || (len > 1 && s.charAt(start) == '0')) {
        return null;
      }
      out[part++] = (byte) value;
      if (part < 4) {
        if (i >= n || s.charAt(i) != '.') {
          return null;
        }
        i++;
      }
    }
    return i == n ? out : null;
  }

  /** Eight groups of 1-4 hex digits, one {@code ::} for a run of zero groups, an IPv4 tail allowed. */
  public static byte[] parseV6(String s) {
    int doubleColon = s.indexOf("::");
    if (doubleColon >= 0 && s.indexOf("::", doubleColon + 1) >= 0) {
      return null;
    }
    int[] groups = new int[8];
    int count;
    if (doubleColon < 0) {
      count = groups(s, groups, 0, true);
      return count == 8 ? toBytes(groups) : null;
    }
    String head = s.substring(0, doubleColon);
    String tail = s.substring(doubleColon + 2);
    int[] headGroups = new int[8];
    int[] tailGroups = new int[8];
    int h = head.isEmpty() ? 0 : groups(head, headGroups, 0, false);
    int t = tail.isEmpty() ? 0 : groups(tail, tailGroups, 0, true);
    if (h < 0 || t < 0 || h + t > 7) {
      return null;
    }
    System.arraycopy(headGroups, 0, groups, 0, h);
    System.arraycopy(tailGroups, 0, groups, 8 - t, t);
    return toBytes(groups);
  }

  /**
   * Parses colon-separated groups of {@code s} into {@code out}; an IPv4 tail (two groups) is
   * allowed at the end when {@code v4Tail}. Returns the number of groups, or -1 when malformed.
   */
  private static int groups(String s, int[] out, int at, boolean v4Tail) {
    int count = at;
    int start = 0;
    while (true) {
      int colon = s.indexOf(':', start);
      String group = colon < 0 ? s.substring(start) : s.substring(start, colon);
      if (colon < 0 && v4Tail && group.indexOf('.') >= 0) {
        byte[] v4 = parseV4(group);
        if (v4 == null || count > 6) {
          return -1;
        }
        out[count++] = ((v4[0] & 0xff) << 8) | (v4[1] & 0xff);
        out[count++] = ((v4[2] & 0xff) << 8) | (v4[3] & 0xff);
        return count;
      }
      if (group.isEmpty() || group.length() > 4 || count >= 8) {
        return -1;
      }
      int value = 0;
      for (int i = 0; i < group.length(); i++) {
        int d = Character.digit(group.charAt(i), 16);
        if (d < 0 || group.charAt(i) > 'f') {
          return -1;
        }
        value = value * 16 + d;
      }
      out[count++] = value;
      if (colon < 0) {
        return count;
      }
      start = colon + 1;
    }
  }

  private static byte[] toBytes(int[] groups) {
    byte[] out = new byte[16];
    for (int i = 0; i < 8; i++) {
      out[2 * i] = (byte) (groups[i] >>> 8);
      out[2 * i + 1] = (byte) groups[i];
    }
    return out;
  }

  private static boolean isV4Mapped(byte[] a) {
    for (int i = 0; i < 10; i++) {
      if (a[i] != 0) {
        return false;
      }
    }
    return a[10] == (byte) 0xff && a[11] == (byte) 0xff;
  }

  /** The canonical text: dotted quad, or RFC 5952 (lower case, longest zero run as {@code ::}). */
  public static String format(byte[] a) {
    if (a.length == 4) {
      return (a[0] & 0xff) + "." + (a[1] & 0xff) + "." + (a[2] & 0xff) + "." + (a[3] & 0xff);
    }
    int[] groups = new int[8];
    for (int i = 0; i < 8; i++) {
      groups[i] = ((a[2 * i] & 0xff) << 8) | (a[2 * i + 1] & 0xff);
    }
    int bestStart = -1;
    int bestLen = 0;
    for (int i = 0; i < 8; ) {
      if (groups[i] != 0) {
        i++;
        continue;
      }
      int j = i;
      while (j < 8 && groups[j] == 0) {
        j++;
      }
      if (j - i > bestLen) {
        bestStart = i;
        bestLen = j - i;
      }
      i = j;
    }
    if (bestLen < 2) {
      bestStart = -1;
    }
    StringBuilder sb = new StringBuilder(39);
    for (int i = 0; i < 8; i++) {
      if (i == bestStart) {
        sb.append("::");
        i += bestLen - 1;
        continue;
      }
      if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') {
        sb.append(':');
      }
      sb.append(Integer.toHexString(groups[i]));
    }
    return sb.toString().toLowerCase(Locale.ROOT);
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  /** A network: an address and a prefix length; IPv4 networks match IPv4(-mapped) addresses only. */
  public record Cidr(byte[] network, int prefix) {
    /**
     * Parses {@code 10.0.0.0/8}, {@code 2001:db8::/32}, {@code ::ffff:10.0.0.0/104} or a single
     * address ({@code /32} or {@code /128}). Host bits are ignored ({@code 10.1.2.3/8} is
     * {@code 10.0.0.0/8}).
     *
     * @throws IllegalArgumentException naming the text when it is not a network
     */
    public static Cidr parse(String text) {
      String s = text == null ? "" : text.trim();
      int slash = s.indexOf('/');
      String addressText = slash < 0 ? s : s.substring(0, slash);
      byte[] address = InetLiterals.parse(addressText);
      boolean written6 = addressText.indexOf(':') >= 0;
      if (address == null) {
        throw new IllegalArgumentException("not an IPv4 or IPv6 network: '" + text
            + "'; expected an address literal with an optional /prefix, e.g. 10.0.0.0/8 or ::1/128");
      }
      int max = written6 ? 128 : 32;
      int prefix = max;
      if (slash >= 0) {
        String p = s.substring(slash + 1);
        if (p.isEmpty() || p.length() > 3 || !p.chars().allMatch(c -> c >= '0' && c <= '9')) {
          throw new IllegalArgumentException("not an IPv4 or IPv6 network: '" + text
              + "': the prefix length must be a number from 0 to " + max);
        }
        prefix = Integer.parseInt(p);
        if (prefix > max) {
          throw new IllegalArgumentException("not an IPv4 or IPv6 network: '" + text
              + "': the prefix length must be at most " + max);
        }
      }
      if (written6 && address.length == 4) {
        // an IPv4-mapped network, such as ::ffff:10.0.0.0/104
        if (prefix < 96) {
          throw new IllegalArgumentException("not an IPv4 or IPv6 network: '" + text
              + "': an IPv4-mapped network needs a prefix of at least 96");
        }
        prefix -= 96;
      }
      return new Cidr(address, prefix);
    }

    public boolean contains(byte[] address) {
      if (address.length != network.length) {
        return false;
      }
      int full = prefix / 8;
      for (int i = 0; i < full; i++) {
        if (address[i] != network[i]) {
          return false;
        }
      }
      int rest = prefix % 8;
      if (rest == 0) {
        return true;
      }
      int mask = (0xff << (8 - rest)) & 0xff;
      return (address[full] & mask) == (network[full] & mask);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Cidr c && c.prefix == prefix && Arrays.equals(c.network, network);
    }

    @Override
    public int hashCode() {
      return 31 * Arrays.hashCode(network) + prefix;
    }

    @Override
    public String toString() {
      return format(network) + "/" + prefix;
    }
  }
}

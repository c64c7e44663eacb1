package dev.ratelimit.redis;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Set;

/**
 * A {@code redis://} or {@code rediss://} URL (or Valkey's {@code valkey://}, {@code valkeys://}),
 * {@code [user:password@]host[:port][/database]}, read
 * the same way wherever a module builds its own Redisson client from one (the servlet filter's
 * config file, the Spring Boot starter), so that one URL names one database everywhere: the port
 * defaults to 6379, and the path is the database number (Redisson's address takes neither a
 * missing port nor a path).
 *
 * @param address what Redisson's {@code setAddress} takes: scheme, user and password as given
 *     (percent-encoded), host and port
 * @param database the database number, 0 when the URL has no path
 */
public record RedisUrl(String address, int database) {
  private static final int DEFAULT_PORT = 6379;
  private static final Set<String> SCHEMES = Set.of("redis", "rediss", "valkey", "valkeys");

  /**
   * Reads {@code url}.
   *
   * @throws IllegalArgumentException when it is not such a URL, with a message that quotes it
   *     without its password
   */
  public static RedisUrl parse(String url) {
    if (url == null || url.isBlank()) {
      throw new IllegalArgumentException("is empty: a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379");
    }
    String afterScheme = url.trim().replaceFirst("^[A-Za-z]+://", "");
    int at = afterScheme.lastIndexOf('@');
    if (at > 0 && afterScheme.substring(0, at).matches(".*[/#?@].*")) {
      // the URI would end its authority at the first of them: the host read would be part of the password
      throw new IllegalArgumentException("'" + redact(url) + "': the user or password holds '/', '#', '?' or '@';"
          + " percent-encode them (%2F, %23, %3F, %40), e.g. redis://:Ab%2Fc@cache.example.com:6380");
    }
    URI uri;
    try {
      uri = new URI(url.trim());
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("'" + redact(url) + "' is not a URL: " + e.getReason());
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!SCHEMES.contains(scheme) || uri.getHost() == null) {
      throw new IllegalArgumentException("'" + redact(url) + "' is not a redis://, rediss://, valkey:// or "
          + "valkeys:// URL with a host, e.g. redis://127.0.0.1:6379 (a host name may not contain '_')");
    }
    String path = uri.getPath() == null ? "" : uri.getPath();
    if (!path.isEmpty() && !path.equals("/") && !path.matches("/[0-9]{1,2}")) {
      throw new IllegalArgumentException("'" + redact(url) + "': the path must be a database number, e.g. /0");
    }
    if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
      throw new IllegalArgumentException("'" + redact(url) + "': takes no query or fragment (rediss:// for TLS)");
    }
    // Redisson percent-decodes the user and password as a form would: a literal '+' must stay one
    String userInfo = uri.getRawUserInfo() == null ? "" : uri.getRawUserInfo().replace("+", "%2B") + "@";
    int port = uri.getPort() < 0 ? DEFAULT_PORT : uri.getPort();
    int database = path.length() > 1 ? Integer.parseInt(path.substring(1)) : 0;
    return new RedisUrl(scheme + "://" + userInfo + uri.getHost() + ":" + port, database);
  }

  /** {@code url} without its user and password (everything up to its last '@'), for messages. */
  public static String redact(String url) {
    return url == null ? null : url.replaceFirst("//.*@", "//***@");
  }

  /** The address without the user and password. */
  @Override
  public String toString() {
    return "RedisUrl[" + redact(address) + ", database " + database + "]";
  }
}

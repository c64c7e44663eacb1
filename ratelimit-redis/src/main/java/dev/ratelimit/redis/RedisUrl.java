package dev.ratelimit.redis;

import java.net.URI;
import java.net.URISyntaxException;

/**
 * A {@code redis://} or {@code rediss://} URL, {@code [user:password@]host[:port][/database]}, read
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
    URI uri;
    try {
      uri = new URI(url.trim());
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("'" + redact(url) + "' is not a URL: " + e.getReason());
    }
    if (!("redis".equals(uri.getScheme()) || "rediss".equals(uri.getScheme())) || uri.getHost() == null) {
      throw new IllegalArgumentException("'" + redact(url) + "' is not a redis:// or rediss:// URL with a host, "
          + "e.g. redis://127.0.0.1:6379 (a host name may not contain '_')");
    }
    String path = uri.getPath() == null ? "" : uri.getPath();
    if (!path.isEmpty() && !path.equals("/") && !path.matches("/[0-9]{1,2}")) {
      throw new IllegalArgumentException("'" + redact(url) + "': the path must be a database number, e.g. /0");
    }
    if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
      throw new IllegalArgumentException("'" + redact(url) + "': takes no query or fragment (rediss:// for TLS)");
    }
    String userInfo = uri.getRawUserInfo() == null ? "" : uri.getRawUserInfo() + "@";
    int port = uri.getPort() < 0 ? DEFAULT_PORT : uri.getPort();
    int database = path.length() > 1 ? Integer.parseInt(path.substring(1)) : 0;
    return new RedisUrl(uri.getScheme() + "://" + userInfo + uri.getHost() + ":" + port, database);
  }

  /** {@code url} without its user and password, for messages. */
  public static String redact(String url) {
    return url == null ? null : url.replaceFirst("//[^/]*@", "//***@");
  }

  /** The address without the user and password. */
  @Override
  public String toString() {
    return "RedisUrl[" + redact(address) + ", database " + database + "]";
  }
}

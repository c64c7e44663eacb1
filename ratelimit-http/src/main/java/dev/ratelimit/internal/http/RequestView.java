package dev.ratelimit.internal.http;

import java.util.Map;

/**
 * What a rule's expressions read of one request, whatever the server API: each adapter (servlet,
 * reactive) reads its own request type. The client's address, its network, the query parameters
 * and the header map are worked out on first use, so a rule keyed on none of them pays for none.
 */
public abstract class RequestView {
  private String path;
  private final String method;
  private Map<String, String> headers;
  private String clientIp;
  private String clientNetwork;
  private Map<String, String> params;

  /**
   * @param path the decoded path within the application ({@code #path}); null to have {@link
   *     #readPath()} work it out on first use
   * @param method the method ({@code #method})
   */
  protected RequestView(String path, String method) {
    this.path = path;
    this.method = method;
  }

  /** The decoded path within the application, when the constructor was not given it. */
  protected String readPath() {
    throw new IllegalStateException("no path");
  }

  /** The request's first value of header {@code name}, case-insensitive; null when absent. */
  protected abstract String header(String name);

  /** The names of the request's headers. */
  protected abstract Iterable<String> headerNames();

  /** The client's address behind trusted proxies, worked out once by {@link #clientIp()}. */
  protected abstract String resolveClientIp();

  /** The query's parameters, first values, decoded; worked out once by {@link #params()}. */
  protected abstract Map<String, String> readParams();

  /** The authenticated user's name, or null. */
  public abstract String principal();

  /** The server's own request object, {@code #request}, whose door's sandbox reads its properties. */
  public abstract Object request();

  /** {@code #path}. */
  public final String path() {
    if (path == null) {
      path = readPath();
    }
    return path;
  }

  /** {@code #method}. */
  public final String method() {
    return method;
  }

  /** {@code #headers}: by name, case-insensitive, first value; read-only. */
  public final Map<String, String> headers() {
    if (headers == null) {
      headers = new HeaderMap(this::header, this::headerNames);
    }
    return headers;
  }

  /** {@code #clientIp}, on first use. */
  public final String clientIp() {
    if (clientIp == null) {
      clientIp = resolveClientIp();
    }
    return clientIp;
  }

  /** {@code #clientNetwork}: {@link ForwardedClient#network} of the client's address, on first use. */
  public final String clientNetwork() {
    if (clientNetwork == null) {
      clientNetwork = ForwardedClient.network(clientIp());
    }
    return clientNetwork;
  }

  /** {@code #params}, on first use. */
  public final Map<String, String> params() {
    if (params == null) {
      params = readParams();
    }
    return params;
  }
}

package dev.ratelimit.webflux;

import dev.ratelimit.internal.http.DoorProperties;
import dev.ratelimit.internal.http.RequestExpressions;
import dev.ratelimit.internal.http.RequestView;
import java.net.InetSocketAddress;
import java.util.AbstractMap;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.springframework.expression.AccessException;
import org.springframework.http.HttpCookie;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;

/**
 * The reactive filter's expressions: the {@linkplain RequestExpressions variables both filters
 * offer}, read from a {@link ServerHttpRequest}, in a sandbox that reads the request's properties
 * through {@link RequestProperties} alone. {@code #request} has the properties a reactive request
 * has; the servlet-only ones ({@code servletPath}, {@code remoteUser} ...) are refused at
 * start-up, naming the rule.
 */
final class ExchangeExpressions {
  static final System.Logger LOG = System.getLogger(RateLimitWebFilter.class.getName());
  /** The reactive door's expressions. */
  static final RequestExpressions DOOR = new RequestExpressions(LOG, RequestProperties.INSTANCE, "a reactive request's");

  private ExchangeExpressions() {}

  /** The peer's address as text, without a DNS lookup; null when the server does not know it. */
  static String address(InetSocketAddress socket) {
    if (socket == null) {
      return null;
    }
    return socket.getAddress() != null ? socket.getAddress().getHostAddress() : socket.getHostString();
  }

  /** The decoded path within the application: its segments' values, path parameters left out. */
  static String decodedPath(PathContainer path) {
    StringBuilder sb = new StringBuilder(path.value().length());
    for (PathContainer.Element element : path.elements()) {
      sb.append(element instanceof PathContainer.PathSegment segment ? segment.valueToMatch() : element.value());
    }
    return sb.length() == 0 ? "/" : sb.toString();
  }

  /** What the variables of one reactive request hold. */
  static final class RequestValues extends RequestView {
    private final ServerHttpRequest request;
    private final Function<ServerHttpRequest, String> clientIpOf;
    private final String principal;

    RequestValues(ServerHttpRequest request, Function<ServerHttpRequest, String> clientIpOf, String method,
        String principal) {
      super(null, method);
      this.request = request;
      this.clientIpOf = clientIpOf;
      this.principal = principal;
    }

    @Override
    protected String readPath() {
      return decodedPath(request.getPath().pathWithinApplication());
    }

    @Override
    protected String header(String name) {
      return request.getHeaders().getFirst(name);
    }

    @Override
    protected Iterable<String> headerNames() {
      return request.getHeaders().headerNames();
    }

    @Override
    protected String resolveClientIp() {
      return clientIpOf.apply(request);
    }

    @Override
    protected Map<String, String> readParams() {
      return new FirstValues(request.getQueryParams().toSingleValueMap());
    }

    @Override
    public String principal() {
      return principal;
    }

    @Override
    public Object request() {
      return request;
    }
  }

  /** Query parameters' first values, decoded, read-only. */
  private static final class FirstValues extends AbstractMap<String, String> {
    private final Map<String, String> values;

    FirstValues(Map<String, String> values) {
      this.values = values;
    }

    @Override
    public String get(Object name) {
      return values.get(name);
    }

    @Override
    public Set<Entry<String, String>> entrySet() {
      return Collections.unmodifiableMap(values).entrySet();
    }
  }

  /**
   * Reads the properties without side effects of a reactive request ({@code #request.scheme}), a
   * principal ({@code name}), a cookie ({@code name}, {@code value}) and {@code #response.status};
   * nothing else, and never the body.
   */
  static final class RequestProperties extends DoorProperties<ServerHttpRequest, HttpCookie> {
    static final Set<String> REQUEST = Set.of("method", "requestURI", "contextPath", "queryString", "scheme",
        "serverName", "serverPort", "contentType", "contentLength", "secure", "remoteAddr", "remotePort",
        "localAddr", "localPort", "cookies", "requestId");

    /** Made after {@link #REQUEST}, which its constructor reads. */
    static final RequestProperties INSTANCE = new RequestProperties();

    private RequestProperties() {
      super(ServerHttpRequest.class, HttpCookie.class, REQUEST,
          HttpCookie::getName, HttpCookie::getValue);
    }

    @Override
    protected Object property(ServerHttpRequest r, String name) throws AccessException {
      return switch (name) {
        case "method" -> r.getMethod().name();
        case "requestURI" -> r.getURI().getRawPath();
        case "contextPath" -> r.getPath().contextPath().value();
        case "queryString" -> r.getURI().getRawQuery();
        case "scheme" -> r.getURI().getScheme();
        case "serverName" -> r.getURI().getHost();
        case "serverPort" -> r.getURI().getPort();
        case "contentType" -> r.getHeaders().getFirst(HttpHeaders.CONTENT_TYPE);
        case "contentLength" -> r.getHeaders().getContentLength();
        case "secure" -> r.getSslInfo() != null;
        case "remoteAddr" -> address(r.getRemoteAddress());
        case "remotePort" -> r.getRemoteAddress() == null ? -1 : r.getRemoteAddress().getPort();
        case "localAddr" -> address(r.getLocalAddress());
        case "localPort" -> r.getLocalAddress() == null ? -1 : r.getLocalAddress().getPort();
        case "cookies" -> r.getCookies().values().stream().flatMap(List::stream).toArray(HttpCookie[]::new);
        case "requestId" -> r.getId();
        default -> throw new AccessException("cannot read '" + name + "' of the request");
      };
    }
  }
}

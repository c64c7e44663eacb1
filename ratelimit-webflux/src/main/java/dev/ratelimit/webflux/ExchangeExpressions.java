package dev.ratelimit.webflux;

import dev.ratelimit.internal.LogThrottle;
import dev.ratelimit.internal.expression.Pipeline;
import dev.ratelimit.internal.expression.ReadOnlyProperties;
import dev.ratelimit.internal.expression.Sandbox;
import dev.ratelimit.internal.expression.SandboxContext;
import dev.ratelimit.internal.expression.Shape;
import dev.ratelimit.internal.expression.Variables;
import dev.ratelimit.internal.http.ForwardedClient;
import dev.ratelimit.servlet.MissingKey;
import java.net.InetSocketAddress;
import java.security.Principal;
import java.util.AbstractMap;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.springframework.expression.AccessException;
import org.springframework.expression.EvaluationContext;
import org.springframework.http.HttpCookie;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpRequest;

/**
 * The reactive filter's expressions: the servlet filter's variables, read from a {@link
 * ServerHttpRequest}, in a {@link Sandbox} that reads the request's properties through {@link
 * RequestProperties} alone. {@code #request} has the properties a reactive request has; the
 * servlet-only ones ({@code servletPath}, {@code remoteUser} ...) are refused at start-up, naming
 * the rule.
 */
final class ExchangeExpressions {
  /** The variables an expression may use: the servlet filter's. */
  static final Set<String> NAMES = Collections.unmodifiableSet(new LinkedHashSet<>(List.of("clientIp",
      "clientNetwork", "path", "method", "headers", "params", "pathVariables", "principal", "request")));

  private static final System.Logger LOG = System.getLogger(RateLimitWebFilter.class.getName());
  static final Sandbox SANDBOX = Sandbox.builder().properties(RequestProperties.INSTANCE).build();
  static final Variables VARIABLES = variables();
  static final Variables COUNT_VARIABLES = Variables.builder().addAll(VARIABLES)
      .add("response", Shape.object("the response's property is status", Map.of("status", Shape.leaf("a number"))))
      .build();

  private ExchangeExpressions() {}

  private static Variables variables() {
    Shape text = Shape.leaf("a text");
    Shape cookie = Shape.object("a cookie's properties are name and value", Map.of("name", text, "value", text));
    Map<String, Shape> request = new HashMap<>();
    for (String name : RequestProperties.REQUEST) {
      request.put(name, switch (name) {
        case "cookies" -> Shape.array("an array of cookies", cookie);
        case "serverPort", "contentLength", "remotePort", "localPort" -> Shape.leaf("a number");
        case "secure" -> Shape.leaf("a boolean");
        default -> text;
      });
    }
    Variables.Builder variables = Variables.builder();
    for (String name : NAMES) {
      variables.add(name, switch (name) {
        case "request" -> Shape.object("a reactive request's properties are "
            + String.join(", ", new TreeSet<>(RequestProperties.REQUEST)), request);
        case "headers", "params", "pathVariables" -> Shape.map(text);
        default -> text;
      });
    }
    return variables.build();
  }

  /** The filter's pipeline, as the servlet filter's: a request never fails for an expression. */
  static Pipeline pipeline(MissingKey missingKey, LogThrottle log) {
    return Pipeline.builder(SANDBOX, LOG)
        .onError(Pipeline.OnError.CORRECT)
        .missingKey(missingKey == MissingKey.REJECT ? Pipeline.MissingKey.REJECT : Pipeline.MissingKey.SHARED_BUCKET)
        .subject("request")
        .rejection("rejected with 400")
        .throttle(log)
        .build();
  }

  /** The context of one rule for one request, holding only the {@code variables} its expressions use. */
  static EvaluationContext context(RequestValues values, Map<String, String> pathVariables, Set<String> variables) {
    SandboxContext context = SANDBOX.context();
    for (String name : variables) {
      context.setVariable(name, switch (name) {
        case "request" -> values.request;
        case "clientIp" -> values.clientIp;
        case "clientNetwork" -> ForwardedClient.network(values.clientIp);
        case "path" -> values.path;
        case "method" -> values.method;
        case "headers" -> values.headers;
        case "params" -> values.params();
        case "pathVariables" -> pathVariables;
        case "principal" -> values.principal;
        default -> throw new IllegalStateException("no value for #" + name);
      });
    }
    return context;
  }

  /** {@code #response} of a rule's {@code count-when}. */
  record ResponseStatus(int status) {}

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

  /** What the variables of one request hold. */
  static final class RequestValues {
    final ServerHttpRequest request;
    final String clientIp;
    final String path;
    final String method;
    final String principal;
    final Map<String, String> headers;

    RequestValues(ServerHttpRequest request, String clientIp, String path, String method, String principal) {
      this.request = request;
      this.clientIp = clientIp;
      this.path = path;
      this.method = method;
      this.principal = principal;
      this.headers = new HeaderMap(request.getHeaders());
    }

    Map<String, String> params() {
      return new FirstValues(request.getQueryParams().toSingleValueMap());
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

  /** Request headers by name, case-insensitive, first value; read-only. */
  static final class HeaderMap extends AbstractMap<String, String> {
    private final HttpHeaders headers;

    HeaderMap(HttpHeaders headers) {
      this.headers = headers;
    }

    @Override
    public String get(Object name) {
      return name instanceof String s ? headers.getFirst(s) : null;
    }

    @Override
    public boolean containsKey(Object name) {
      return get(name) != null;
    }

    @Override
    public Set<Entry<String, String>> entrySet() {
      Map<String, String> all = new LinkedHashMap<>();
      for (String name : headers.headerNames()) {
        all.putIfAbsent(name, headers.getFirst(name));
      }
      return Collections.unmodifiableMap(all).entrySet();
    }
  }

  /**
   * Reads the properties without side effects of a reactive request ({@code #request.scheme}), a
   * principal ({@code name}), a cookie ({@code name}, {@code value}) and {@code #response.status};
   * nothing else, and never the body.
   */
  static final class RequestProperties extends ReadOnlyProperties {
    static final RequestProperties INSTANCE = new RequestProperties();

    static final Set<String> REQUEST = Set.of("method", "requestURI", "contextPath", "queryString", "scheme",
        "serverName", "serverPort", "contentType", "contentLength", "secure", "remoteAddr", "remotePort",
        "localAddr", "localPort", "cookies", "requestId");

    @Override
    public boolean canRead(EvaluationContext context, Object target, String name) {
      if (target instanceof ServerHttpRequest) {
        return REQUEST.contains(name);
      }
      if (target instanceof Principal || target instanceof ResponseStatus) {
        return name.equals(target instanceof Principal ? "name" : "status");
      }
      if (target instanceof HttpCookie) {
        return name.equals("name") || name.equals("value");
      }
      return false;
    }

    @Override
    protected Object value(Object target, String name) throws AccessException {
      Object value;
      if (target instanceof ServerHttpRequest r) {
        value = switch (name) {
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
      } else if (target instanceof Principal p) {
        value = p.getName();
      } else if (target instanceof ResponseStatus r) {
        value = r.status();
      } else {
        HttpCookie c = (HttpCookie) target;
        value = name.equals("name") ? c.getName() : c.getValue();
      }
      return value;
    }
  }
}

package dev.ratelimit.servlet;

import dev.ratelimit.internal.LogThrottle;
import dev.ratelimit.internal.expression.Pipeline;
import dev.ratelimit.internal.expression.ReadOnlyProperties;
import dev.ratelimit.internal.expression.Sandbox;
import dev.ratelimit.internal.expression.SandboxContext;
import dev.ratelimit.internal.expression.Shape;
import dev.ratelimit.internal.expression.Variables;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.AbstractMap;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import org.springframework.expression.AccessException;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;

/**
 * The filter's key and cost expressions: the variables of a request, and its sandbox, one
 * {@link Sandbox} (shared with {@code @RateLimited}) that reads the request's properties through
 * {@link RequestProperties} alone: no method calls, no beans, no getters of other objects.
 * Expressions are parsed once, and evaluated per request through the filter's {@link Pipeline}.
 */
final class Expressions {
  /** The variables an expression may use (besides {@code #this} and {@code #root}). */
  static final Set<String> NAMES = Collections.unmodifiableSet(new LinkedHashSet<>(
      java.util.List.of("clientIp", "clientNetwork", "path", "method", "headers", "params", "pathVariables",
          "principal", "request")));

  /**
   * The filter's logger, named without loading {@link RateLimitFilter}: rules are built without the
   * servlet API too (the reactive filter's), and loading the filter class would need it.
   */
  private static final System.Logger LOG = System.getLogger("dev.ratelimit.servlet.RateLimitFilter");
  /** Only the request's own properties: no method calls, no beans. */
  static final Sandbox SANDBOX = Sandbox.builder().properties(RequestProperties.INSTANCE).build();
  /** {@link #NAMES}, and what parse time knows of their values. */
  static final Variables VARIABLES = variables();
  /** What a rule's {@code count-when} reads: {@link #VARIABLES} and {@code #response}. */
  static final Variables COUNT_VARIABLES = Variables.builder().addAll(VARIABLES)
      .add("response", Shape.object("the response's property is status", Map.of("status", Shape.leaf("a number"))))
      .build();

  private Expressions() {}

  private static Variables variables() {
    Shape text = Shape.leaf("a text");
    Shape cookie = Shape.object("a cookie's properties are name and value", Map.of("name", text, "value", text));
    Map<String, Shape> request = new HashMap<>();
    for (String name : RequestProperties.REQUEST) {
      request.put(name, switch (name) {
        case "userPrincipal" -> Shape.object("a principal's property is name", Map.of("name", text));
        case "cookies" -> Shape.array("an array of cookies", cookie);
        case "serverPort", "contentLength", "remotePort", "localPort" -> Shape.leaf("a number");
        case "secure" -> Shape.leaf("a boolean");
        default -> text;
      });
    }
    Variables.Builder variables = Variables.builder();
    for (String name : NAMES) {
      variables.add(name, switch (name) {
        case "request" -> Shape.object("the request's properties are "
            + String.join(", ", new TreeSet<>(RequestProperties.REQUEST)), request);
        case "headers", "params", "pathVariables" -> Shape.map(text);
        default -> text;
      });
    }
    return variables.build();
  }

  /**
   * Parses {@code text} and checks it against the sandbox.
   *
   * @param what names the expression in messages, e.g. {@code rule 'api': key}
   * @throws IllegalArgumentException naming {@code what} and the expression
   */
  static Expression parse(String text, String what) {
    return SANDBOX.parse(text, what, VARIABLES);
  }

  /**
   * Parses a rule's condition ({@code when}, {@code skip-when}, or with {@link #COUNT_VARIABLES}
   * {@code count-when}) and checks it against the sandbox.
   *
   * @throws IllegalArgumentException naming {@code what} and the expression, also when it is a
   *     constant that is no boolean
   */
  static void condition(String text, String what, Variables variables) {
    CHECKING.condition(text, what, variables, true, "");
  }

  /** Parses conditions for {@link #condition}: its logger and throttle are never used. */
  private static final Pipeline CHECKING = Pipeline.builder(SANDBOX, LOG).build();

  /**
   * The filter's pipeline: a request never fails for an expression; one without a key shares a
   * bucket or gets a 400, as {@code missingKey} says.
   */
  static Pipeline pipeline(MissingKey missingKey, LogThrottle log) {
    return Pipeline.builder(SANDBOX, LOG)
        .onError(Pipeline.OnError.CORRECT)
        .missingKey(missingKey == MissingKey.REJECT ? Pipeline.MissingKey.REJECT : Pipeline.MissingKey.SHARED_BUCKET)
        .subject("request")
        .rejection("rejected with 400")
        .throttle(log)
        .build();
  }

  /**
   * The evaluation context of one rule for one request, holding the {@code variables} its
   * expressions use: the others are not computed.
   */
  static EvaluationContext context(RequestValues values, Map<String, String> pathVariables,
      Set<String> variables) {
    SandboxContext context = SANDBOX.context();
    for (String name : variables) {
      context.setVariable(name, switch (name) {
        case "request" -> values.request;
        case "clientIp" -> values.clientIp();
        case "clientNetwork" -> values.clientNetwork();
        case "path" -> values.path;
        case "method" -> values.method;
        case "headers" -> values.headers;
        case "params" -> values.params();
        case "pathVariables" -> pathVariables;
        case "principal" -> values.principal();
        default -> throw new IllegalStateException("no value for #" + name); // NAMES and this switch disagree
      });
    }
    return context;
  }

  /** {@code #response} of a rule's {@code count-when}: what is known of the response once the chain has run. */
  record ResponseStatus(int status) {}

  /**
   * What the variables of one request hold; the client's address and the query string are worked
   * out on first use, so a rule keyed on neither pays for neither.
   */
  static final class RequestValues {
    final HttpServletRequest request;
    final String path;
    final String method;
    final Map<String, String> headers;
    private final Function<HttpServletRequest, String> clientIpOf;
    private String clientIp;
    private Map<String, String> params;
    private String clientNetwork;

    RequestValues(HttpServletRequest request, String clientIp, String path, String method) {
      this(request, r -> clientIp, path, method);
    }

    RequestValues(HttpServletRequest request, Function<HttpServletRequest, String> clientIpOf, String path,
        String method) {
      this.request = request;
      this.clientIpOf = clientIpOf;
      this.path = path;
      this.method = method;
      this.headers = new HeaderMap(request);
    }

    /** The client's address, as {@link ClientIp#resolve} finds it, on first use. */
    String clientIp() {
      if (clientIp == null) {
        clientIp = clientIpOf.apply(request);
      }
      return clientIp;
    }

    /** {@link ClientIp#network} of the client's address, made on first use. */
    String clientNetwork() {
      if (clientNetwork == null) {
        clientNetwork = ClientIp.network(clientIp());
      }
      return clientNetwork;
    }

    Map<String, String> params() {
      if (params == null) {
        params = queryParams(request.getQueryString());
      }
      return params;
    }

    String principal() {
      Principal p = request.getUserPrincipal();
      return p == null ? null : p.getName();
    }
  }

  /**
   * The query parameters' first values, decoded as UTF-8 ({@code +} as space). The body is never
   * read, so a form post is not consumed before the application sees it.
   */
  static Map<String, String> queryParams(String query) {
    Map<String, String> params = new LinkedHashMap<>();
    if (query == null || query.isEmpty()) {
      return Collections.unmodifiableMap(params);
    }
    for (String pair : query.split("&")) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      try {
        String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
        String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
        params.putIfAbsent(name, value);
      } catch (IllegalArgumentException e) {
        // a malformed escape: the parameter is absent
      }
    }
    return Collections.unmodifiableMap(params);
  }

  /** Request headers by name, case-insensitive, first value; read-only. */
  static final class HeaderMap extends AbstractMap<String, String> {
    private final HttpServletRequest request;

    HeaderMap(HttpServletRequest request) {
      this.request = request;
    }

    @Override
    public String get(Object name) {
      return name instanceof String s ? request.getHeader(s) : null;
    }

    @Override
    public boolean containsKey(Object name) {
      return get(name) != null;
    }

    @Override
    public Set<Entry<String, String>> entrySet() {
      Map<String, String> all = new LinkedHashMap<>();
      for (String name : Collections.list(request.getHeaderNames())) {
        all.putIfAbsent(name, request.getHeader(name));
      }
      return Collections.unmodifiableMap(all).entrySet();
    }
  }

  /**
   * Reads the properties without side effects of the request ({@code #request.remoteUser}), a
   * principal ({@code name}) and a cookie ({@code name}, {@code value}); nothing else. The getters
   * are called directly, not reflectively; {@code getSession}, {@code getInputStream},
   * {@code getParameter} (which may read the body), {@code getServletContext} and
   * {@code getClass} are out of reach.
   */
  static final class RequestProperties extends ReadOnlyProperties {
    static final RequestProperties INSTANCE = new RequestProperties();

    static final Set<String> REQUEST = Set.of("method", "requestURI", "contextPath",
        "servletPath", "pathInfo", "queryString", "scheme", "serverName", "serverPort", "protocol",
        "contentType", "contentLength", "secure", "authType", "remoteUser", "remoteAddr", "remotePort",
        "localAddr", "localPort", "userPrincipal", "cookies", "requestedSessionId", "requestId");

    @Override
    public boolean canRead(EvaluationContext context, Object target, String name) {
      if (target instanceof HttpServletRequest) {
        return REQUEST.contains(name);
      }
      if (target instanceof Principal) {
        return name.equals("name");
      }
      if (target instanceof Cookie) {
        return name.equals("name") || name.equals("value");
      }
      if (target instanceof ResponseStatus) {
        return name.equals("status");
      }
      return false;
    }

    @Override
    protected Object value(Object target, String name) throws AccessException {
      Object value;
      if (target instanceof HttpServletRequest r) {
        value = switch (name) {
          case "method" -> r.getMethod();
          case "requestURI" -> r.getRequestURI();
          case "contextPath" -> r.getContextPath();
          case "servletPath" -> r.getServletPath();
          case "pathInfo" -> r.getPathInfo();
          case "queryString" -> r.getQueryString();
          case "scheme" -> r.getScheme();
          case "serverName" -> r.getServerName();
          case "serverPort" -> r.getServerPort();
          case "protocol" -> r.getProtocol();
          case "contentType" -> r.getContentType();
          case "contentLength" -> r.getContentLengthLong();
          case "secure" -> r.isSecure();
          case "authType" -> r.getAuthType();
          case "remoteUser" -> r.getRemoteUser();
          case "remoteAddr" -> r.getRemoteAddr();
          case "remotePort" -> r.getRemotePort();
          case "localAddr" -> r.getLocalAddr();
          case "localPort" -> r.getLocalPort();
          case "userPrincipal" -> r.getUserPrincipal();
          case "cookies" -> r.getCookies();
          case "requestedSessionId" -> r.getRequestedSessionId();
          case "requestId" -> r.getRequestId();
          default -> throw new AccessException("cannot read '" + name + "' of the request");
        };
      } else if (target instanceof Principal p) {
        value = p.getName();
      } else if (target instanceof ResponseStatus r) {
        value = r.status();
      } else {
        Cookie c = (Cookie) target;
        value = name.equals("name") ? c.getName() : c.getValue();
      }
      return value;
    }
  }
}

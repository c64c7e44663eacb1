package dev.ratelimit.servlet;

import dev.ratelimit.http.MissingKey;
import dev.ratelimit.internal.LogThrottle;
import dev.ratelimit.internal.expression.Pipeline;
import dev.ratelimit.internal.expression.Sandbox;
import dev.ratelimit.internal.expression.Variables;
import dev.ratelimit.internal.http.DoorProperties;
import dev.ratelimit.internal.http.RequestExpressions;
import dev.ratelimit.internal.http.RequestView;
import dev.ratelimit.internal.http.RuleChecks;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.springframework.expression.AccessException;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;

/**
 * The servlet filter's expressions: the {@linkplain RequestExpressions variables both filters
 * offer}, read from an {@link HttpServletRequest}, in a sandbox that reads the request's properties
 * through {@link RequestProperties} alone: no method calls, no beans, no getters of other objects.
 */
final class Expressions {
  /** The variables an expression may use (besides {@code #this} and {@code #root}). */
  static final Set<String> NAMES = RequestExpressions.NAMES;

  /**
   * The filter's logger, named without loading {@link RateLimitFilter}: a configuration file's
   * rules are checked without the servlet API on the class path's filter class.
   */
  static final System.Logger LOG = System.getLogger("dev.ratelimit.servlet.RateLimitFilter");
  /** The servlet door's expressions. */
  static final RequestExpressions DOOR = new RequestExpressions(LOG, RequestProperties.INSTANCE, "the request's");
  /** Only the request's own properties: no method calls, no beans. */
  static final Sandbox SANDBOX = DOOR.sandbox();
  /** {@link #NAMES}, and what parse time knows of their values. */
  static final Variables VARIABLES = DOOR.variables();
  /** What a rule's {@code count-when} and {@code cost-after} read: {@link #VARIABLES} and {@code #response}. */
  static final Variables COUNT_VARIABLES = DOOR.countVariables();
  /** Parses conditions for {@link #condition}: its logger and throttle are never used. */
  private static final Pipeline CHECKING = DOOR.checking();

  private Expressions() {}

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
   * Parses a rule's {@code cost-after}, which reads {@link #COUNT_VARIABLES}, and checks it against
   * the sandbox.
   *
   * @throws IllegalArgumentException naming {@code what} and the expression
   */
  static Expression parseAfter(String text, String what) {
    return SANDBOX.parse(text, what, COUNT_VARIABLES);
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

  /** The filter's pipeline: a request never fails for an expression. */
  static Pipeline pipeline(MissingKey missingKey, LogThrottle log) {
    return DOOR.pipeline(missingKey, log);
  }

  /** The evaluation context of one rule for one request, holding only the {@code variables} it uses. */
  static EvaluationContext context(RequestView values, Map<String, String> pathVariables, Set<String> variables) {
    return DOOR.context(values, pathVariables, variables);
  }

  /** What the variables of one servlet request hold. */
  static final class RequestValues extends RequestView {
    final HttpServletRequest request;
    private final Function<HttpServletRequest, String> clientIpOf;

    RequestValues(HttpServletRequest request, String clientIp, String path, String method) {
      this(request, r -> clientIp, path, method);
    }

    RequestValues(HttpServletRequest request, Function<HttpServletRequest, String> clientIpOf, String path,
        String method) {
      super(path, method);
      this.request = request;
      this.clientIpOf = clientIpOf;
    }

    @Override
    protected String header(String name) {
      return request.getHeader(name);
    }

    @Override
    protected Iterable<String> headerNames() {
      return Collections.list(request.getHeaderNames());
    }

    @Override
    protected String resolveClientIp() {
      return clientIpOf.apply(request);
    }

    @Override
    protected Map<String, String> readParams() {
      return queryParams(request.getQueryString());
    }

    @Override
    public String principal() {
      Principal p = request.getUserPrincipal();
      return p == null ? null : p.getName();
    }

    @Override
    public Object request() {
      return request;
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

  /**
   * Reads the properties without side effects of the request ({@code #request.remoteUser}), a
   * principal ({@code name}) and a cookie ({@code name}, {@code value}); nothing else. The getters
   * are called directly, not reflectively; {@code getSession}, {@code getInputStream},
   * {@code getParameter} (which may read the body), {@code getServletContext} and
   * {@code getClass} are out of reach.
   */
  static final class RequestProperties extends DoorProperties<HttpServletRequest, Cookie> {
    static final Set<String> REQUEST = RuleChecks.REQUEST_PROPERTIES;

    /** Made after {@link #REQUEST}, which its constructor reads. */
    static final RequestProperties INSTANCE = new RequestProperties();

    private RequestProperties() {
      super(HttpServletRequest.class, Cookie.class, REQUEST, Cookie::getName, Cookie::getValue);
    }

    @Override
    protected Object property(HttpServletRequest r, String name) throws AccessException {
      return switch (name) {
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
    }
  }
}

package dev.ratelimit.servlet;

import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.AbstractMap;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.springframework.expression.AccessException;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.PropertyAccessor;
import org.springframework.expression.TypedValue;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.Assign;
import org.springframework.expression.spel.ast.BeanReference;
import org.springframework.expression.spel.ast.CompoundExpression;
import org.springframework.expression.spel.ast.ConstructorReference;
import org.springframework.expression.spel.ast.FunctionReference;
import org.springframework.expression.spel.ast.Indexer;
import org.springframework.expression.spel.ast.MethodReference;
import org.springframework.expression.spel.ast.OpDec;
import org.springframework.expression.spel.ast.OpInc;
import org.springframework.expression.spel.ast.Projection;
import org.springframework.expression.spel.ast.PropertyOrFieldReference;
import org.springframework.expression.spel.ast.Selection;
import org.springframework.expression.spel.ast.TypeReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.SimpleEvaluationContext;

/**
 * Key and cost expressions: parsed once, checked against the sandbox when parsed, evaluated per
 * request in a {@link SimpleEvaluationContext} that has no type locator, no constructor or method
 * resolvers and only {@link RequestProperties} as property accessor.
 *
 * <p>Two fences, each enough on its own: what the sandbox cannot do is refused when the rule is
 * built (type references, constructors, method and function calls, bean references, assignments,
 * unknown variables), and the evaluation context could not do it anyway.
 */
final class Expressions {
  /** The variables an expression may use (besides {@code #this} and {@code #root}). */
  static final Set<String> VARIABLES = Collections.unmodifiableSet(new LinkedHashSet<>(
      java.util.List.of("clientIp", "clientNetwork", "path", "method", "headers", "params", "pathVariables",
          "principal", "request")));

  private static final SpelExpressionParser PARSER = new SpelExpressionParser();

  private Expressions() {}

  /**
   * Parses {@code text} and checks it against the sandbox.
   *
   * @param what names the expression in messages, e.g. {@code rule 'api': key}
   * @throws IllegalArgumentException naming {@code what} and the expression
   */
  static Expression parse(String text, String what) {
    if (text == null || text.isBlank()) {
      throw new IllegalArgumentException(what + " expression must not be blank");
    }
    Expression expression;
    try {
      expression = PARSER.parseExpression(text);
    } catch (ParseException | IllegalStateException e) {
      throw new IllegalArgumentException(what + " expression '" + text + "' does not parse: "
          + (e instanceof ParseException p ? p.getSimpleMessage() : e.getMessage()), e);
    }
    SpelNode ast = ((SpelExpression) expression).getAST();
    check(ast, text, what);
    checkProperties(ast, text, what);
    return expression;
  }

  /** What a step of a property chain reads, as far as the sandbox's accessor can tell. */
  private enum Type { REQUEST, PRINCIPAL, COOKIES, COOKIE, MAP, TEXT, UNKNOWN }

  /**
   * Refuses, when the rule is built, a property the evaluation could never read: a chain that starts
   * at a variable ({@code #request.remoteAddr}, {@code #request.userPrincipal.name}) is followed step
   * by step through the properties {@link RequestProperties} reads, so that a typo, or a property of
   * a map or a text ({@code #headers.Authorization}, {@code #principal.name}), fails here instead
   * of on every request (where the key would be missing and every request would share one bucket).
   * A bare name ({@code clientIp} for {@code #clientIp}) reads a property of nothing, and is refused too.
   */
  private static void checkProperties(SpelNode node, String text, String what) {
    checkProperties(node, false, text, what);
  }

  /** {@code relative}: {@code node} reads from a value before it (a chain's step, a selection's element). */
  private static void checkProperties(SpelNode node, boolean relative, String text, String what) {
    if (node instanceof PropertyOrFieldReference property && !relative) {
      throw new IllegalArgumentException(what + " expression '" + text + "' reads '" + property.getName()
          + "' of nothing; variables start with #, e.g. #" + property.getName());
    }
    if (node instanceof CompoundExpression && node.getChildCount() > 0
        && node.getChild(0) instanceof VariableReference variable) {
      String name = variable.toStringAST().substring(1);
      Type type = switch (name) {
        case "request" -> Type.REQUEST;
        case "headers", "params", "pathVariables" -> Type.MAP;
        case "this", "root" -> Type.UNKNOWN;
        default -> Type.TEXT;
      };
      String path = "#" + name;
      for (int i = 1; i < node.getChildCount() && type != Type.UNKNOWN; i++) {
        SpelNode step = node.getChild(i);
        if (step instanceof PropertyOrFieldReference property) {
          type = property(type, property.getName(), path, text, what);
          path = path + "." + property.getName();
        } else if (step instanceof Indexer) {
          type = type == Type.MAP ? Type.TEXT : type == Type.COOKIES ? Type.COOKIE : Type.UNKNOWN;
          path = path + "[...]";
        } else {
          type = Type.UNKNOWN; // a selection, a projection: not followed
        }
      }
    }
    boolean elements = node instanceof Selection || node instanceof Projection;
    for (int i = 0; i < node.getChildCount(); i++) {
      checkProperties(node.getChild(i), relative || elements || (node instanceof CompoundExpression && i > 0),
          text, what);
    }
  }

  /** The type of {@code name} read from a {@code type}, or refuses it naming what can be read. */
  private static Type property(Type type, String name, String path, String text, String what) {
    String readable = switch (type) {
      case REQUEST -> RequestProperties.REQUEST.contains(name) ? null
          : "the request's properties are " + String.join(", ", new java.util.TreeSet<>(RequestProperties.REQUEST));
      case PRINCIPAL -> name.equals("name") ? null : "a principal's property is name";
      case COOKIE -> name.equals("name") || name.equals("value") ? null : "a cookie's properties are name and value";
      case MAP -> path + " is a map: index it, " + path + "['" + name + "']";
      case COOKIES -> path + " is an array of cookies: index it, " + path + "[0].value";
      case TEXT -> path + " is a text: it has no properties";
      case UNKNOWN -> null;
    };
    if (readable != null) {
      throw new IllegalArgumentException(what + " expression '" + text + "' reads '" + name + "' of " + path
          + ", which has no such property; " + readable);
    }
    if (type != Type.REQUEST) {
      return type == Type.UNKNOWN ? Type.UNKNOWN : Type.TEXT;
    }
    return switch (name) {
      case "userPrincipal" -> Type.PRINCIPAL;
      case "cookies" -> Type.COOKIES;
      default -> Type.TEXT;
    };
  }

  private static void check(SpelNode node, String text, String what) {
    String refused = null;
    if (node instanceof TypeReference) {
      refused = "type references T(...) are";
    } else if (node instanceof ConstructorReference) {
      refused = "constructors (new ...) are";
    } else if (node instanceof MethodReference) {
      refused = "method calls are";
    } else if (node instanceof FunctionReference) {
      refused = "function calls are";
    } else if (node instanceof BeanReference) {
      refused = "bean references are";
    } else if (node instanceof Assign || node instanceof OpInc || node instanceof OpDec) {
      refused = "assignments are";
    } else if (node instanceof VariableReference) {
      String name = node.toStringAST().substring(1);
      if (!VARIABLES.contains(name) && !name.equals("this") && !name.equals("root")) {
        throw new IllegalArgumentException(what + " expression '" + text + "' uses an unknown variable #"
            + name + "; the variables are " + VARIABLES.stream().map(v -> "#" + v)
            .collect(Collectors.joining(", ")));
      }
    }
    if (refused != null) {
      throw new IllegalArgumentException(what + " expression '" + text + "' is refused: " + refused
          + " not allowed in rate-limit expressions (at '" + node.toStringAST() + "'); use the variables "
          + VARIABLES.stream().map(v -> "#" + v).collect(Collectors.joining(", ")) + ", indexing such as "
          + "#headers['X-Api-Key'] and operators");
    }
    for (int i = 0; i < node.getChildCount(); i++) {
      check(node.getChild(i), text, what);
    }
  }

  /** The variables {@code expression} (parsed here) refers to, among {@link #VARIABLES}. */
  static Set<String> variables(Expression expression) {
    Set<String> names = new java.util.HashSet<>();
    collect(((SpelExpression) expression).getAST(), names);
    return Set.copyOf(names);
  }

  private static void collect(SpelNode node, Set<String> names) {
    if (node instanceof VariableReference) {
      String name = node.toStringAST().substring(1);
      if (VARIABLES.contains(name)) {
        names.add(name);
      }
    }
    for (int i = 0; i < node.getChildCount(); i++) {
      collect(node.getChild(i), names);
    }
  }

  /**
   * The evaluation context of one rule for one request, holding the {@code variables} its
   * expressions use (see {@link #variables}): the others are not computed.
   */
  static EvaluationContext context(RequestValues values, Map<String, String> pathVariables,
      Set<String> variables) {
    SimpleEvaluationContext context = SimpleEvaluationContext
        .forPropertyAccessors(RequestProperties.INSTANCE)
        .withAssignmentDisabled()
        .build();
    for (String name : variables) {
      context.setVariable(name, switch (name) {
        case "request" -> values.request;
        case "clientIp" -> values.clientIp;
        case "clientNetwork" -> values.clientNetwork();
        case "path" -> values.path;
        case "method" -> values.method;
        case "headers" -> values.headers;
        case "params" -> values.params();
        case "pathVariables" -> pathVariables;
        case "principal" -> values.principal();
        default -> throw new IllegalStateException("no value for #" + name); // VARIABLES and this switch disagree
      });
    }
    return context;
  }

  /** What the variables of one request hold; the query string is parsed on first use. */
  static final class RequestValues {
    final HttpServletRequest request;
    final String clientIp;
    final String path;
    final String method;
    final Map<String, String> headers;
    private Map<String, String> params;
    private String clientNetwork;

    RequestValues(HttpServletRequest request, String clientIp, String path, String method) {
      this.request = request;
      this.clientIp = clientIp;
      this.path = path;
      this.method = method;
      this.headers = new HeaderMap(request);
    }

    /** {@link ClientIp#network} of the client's address, made on first use. */
    String clientNetwork() {
      if (clientNetwork == null) {
        clientNetwork = ClientIp.network(clientIp);
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
  static final class RequestProperties implements PropertyAccessor {
    static final RequestProperties INSTANCE = new RequestProperties();

    static final Set<String> REQUEST = Set.of("method", "requestURI", "contextPath",
        "servletPath", "pathInfo", "queryString", "scheme", "serverName", "serverPort", "protocol",
        "contentType", "contentLength", "secure", "authType", "remoteUser", "remoteAddr", "remotePort",
        "localAddr", "localPort", "userPrincipal", "cookies", "requestedSessionId", "requestId");

    @Override
    public Class<?>[] getSpecificTargetClasses() {
      return null;
    }

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
      return false;
    }

    @Override
    public TypedValue read(EvaluationContext context, Object target, String name) throws AccessException {
      if (!canRead(context, target, name)) {
        throw new AccessException("cannot read '" + name + "' of " + target.getClass().getName());
      }
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
      } else {
        Cookie c = (Cookie) target;
        value = name.equals("name") ? c.getName() : c.getValue();
      }
      return new TypedValue(value);
    }

    @Override
    public boolean canWrite(EvaluationContext context, Object target, String name) {
      return false;
    }

    @Override
    public void write(EvaluationContext context, Object target, String name, Object newValue)
        throws AccessException {
      throw new AccessException("rate-limit expressions cannot write '" + name + "'");
    }
  }
}

package dev.ratelimit.internal.http;

import dev.ratelimit.Require;
import dev.ratelimit.internal.expression.Pipeline;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import org.springframework.expression.AccessException;

/**
 * What a rule's expressions are checked against when the rule is made, before any door compiles
 * it: the variables every door offers, with {@code #request}'s widest set of properties (the
 * servlet request's). A door compiles the rule again with its own, and the reactive one refuses
 * what its request lacks.
 */
public final class RuleChecks {
  /** {@code #request}'s properties in the widest door, the servlet filter's. */
  public static final Set<String> REQUEST_PROPERTIES = Set.of("method", "requestURI", "contextPath",
      "servletPath", "pathInfo", "queryString", "scheme", "serverName", "serverPort", "protocol",
      "contentType", "contentLength", "secure", "authType", "remoteUser", "remoteAddr", "remotePort",
      "localAddr", "localPort", "userPrincipal", "cookies", "requestedSessionId", "requestId");

  private static final RequestExpressions ANY = new RequestExpressions(
      System.getLogger("dev.ratelimit.servlet.RateLimitFilter"), new Unread(), "the request's");
  private static final Pipeline CHECKING = ANY.checking();

  private RuleChecks() {}

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
  private static final Pattern METHOD = Pattern.compile("[A-Z][A-Z0-9_-]{0,31}");

  /** Checks a rule name, naming it when it is bad. */
  public static void ruleName(String name) {
    Require.argument(name != null && NAME.matcher(name).matches(),
        "rule name '%s' must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit",
        name);
  }

  /**
   * The methods a rule may name: those of IANA's HTTP method registry (HTTP's, PATCH, QUERY,
   * WebDAV's and its extensions), and the cache's PURGE and BAN. A misspelt one ({@code PSOT})
   * would never match, and leave the rule's limit silently off.
   */
  private static final Set<String> KNOWN_METHODS = Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT",
      "OPTIONS", "TRACE", "PATCH", "QUERY", "PRI", "PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK",
      "UNLOCK", "REPORT", "SEARCH", "MKCALENDAR", "ACL", "BIND", "UNBIND", "REBIND", "LINK", "UNLINK",
      "MKREDIRECTREF", "UPDATEREDIRECTREF", "MKACTIVITY", "CHECKOUT", "CHECKIN", "UNCHECKOUT", "MERGE", "LABEL",
      "UPDATE", "VERSION-CONTROL", "MKWORKSPACE", "BASELINE-CONTROL", "ORDERPATCH", "PURGE", "BAN");

  /** A method in upper case, checked. */
  public static String method(String rule, String method) {
    String m = method == null ? "" : method.trim().toUpperCase(Locale.ROOT);
    Require.argument(METHOD.matcher(m).matches(), "rule '%s': '%s' is not an HTTP method", rule, method);
    Require.argument(KNOWN_METHODS.contains(m), "rule '%s': '%s' is not an HTTP method this filter knows (GET,"
        + " HEAD, POST, PUT, DELETE, OPTIONS, PATCH, TRACE, CONNECT, QUERY, one of IANA's registry such as WebDAV's,"
        + " PURGE or BAN): a misspelt method never matches, and would leave the rule off", rule, method);
    return m;
  }


  /**
   * Checks a key or cost expression.
   *
   * @throws IllegalArgumentException naming {@code what} and the expression
   */
  public static void expression(String text, String what) {
    ANY.sandbox().parse(text, what, ANY.variables());
  }

  /**
   * Checks a {@code cost-after} expression, which reads {@code #response} too.
   *
   * @throws IllegalArgumentException naming {@code what} and the expression
   */
  public static void actualCost(String text, String what) {
    ANY.sandbox().parse(text, what, ANY.countVariables());
  }

  /**
   * Checks a condition: {@code when}, {@code skip-when}, or with {@code count} {@code count-when}
   * (which reads {@code #response} too).
   *
   * @throws IllegalArgumentException naming {@code what} and the expression, also when it is a
   *     constant that is no boolean
   */
  public static void condition(String text, String what, boolean count) {
    CHECKING.condition(text, what, count ? ANY.countVariables() : ANY.variables(), true, "");
  }

  /** The widest request's properties, never read: nothing is evaluated here. */
  private static final class Unread extends DoorProperties<Void, Void> {
    Unread() {
      super(Void.class, Void.class, REQUEST_PROPERTIES, cookie -> null, cookie -> null);
    }

    @Override
    protected Object property(Void request, String name) throws AccessException {
      throw new AccessException("cannot read '" + name + "'");
    }
  }
}

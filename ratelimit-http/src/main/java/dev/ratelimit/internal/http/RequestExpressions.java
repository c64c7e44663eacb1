package dev.ratelimit.internal.http;

import dev.ratelimit.http.MissingKey;
import dev.ratelimit.internal.LogThrottle;
import dev.ratelimit.internal.expression.Pipeline;
import dev.ratelimit.internal.expression.Sandbox;
import dev.ratelimit.internal.expression.SandboxContext;
import dev.ratelimit.internal.expression.Shape;
import dev.ratelimit.internal.expression.Variables;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.springframework.expression.EvaluationContext;

/**
 * The filter rules' expressions of one door: the variables every door offers ({@link #NAMES}),
 * read from a {@link RequestView}, in a {@link Sandbox} (shared with {@code @RateLimited}) that
 * reads only the properties the door's {@link DoorProperties} allows of its request type. The
 * doors differ only in {@code #request}: its properties are those of their request type.
 */
public final class RequestExpressions {
  /** The variables an expression may use (besides {@code #this} and {@code #root}). */
  public static final Set<String> NAMES = Collections.unmodifiableSet(new LinkedHashSet<>(List.of("clientIp",
      "clientNetwork", "path", "method", "headers", "params", "pathVariables", "principal", "request")));

  private final System.Logger log;
  private final Sandbox sandbox;
  private final Variables variables;
  private final Variables countVariables;

  /**
   * @param logger the door's logger, which the pipeline logs to
   * @param properties what the sandbox reads of the door's request, principal, cookies and
   *     {@link ResponseView}
   * @param requestIs how {@code #request} is described in messages, e.g. "the request's"
   */
  public RequestExpressions(System.Logger logger, DoorProperties<?, ?> properties, String requestIs) {
    this.log = logger;
    Map<String, Shape> request = requestShapes(properties.names());
    this.sandbox = Sandbox.builder().properties(properties).build();
    Shape text = Shape.leaf("a text");
    Variables.Builder names = Variables.builder();
    for (String name : NAMES) {
      names.add(name, switch (name) {
        case "request" -> Shape.object(requestIs + " properties are " + String.join(", ", new TreeSet<>(request.keySet())),
            request);
        case "headers", "params", "pathVariables" -> Shape.map(text);
        default -> text;
      });
    }
    this.variables = names.build();
    this.countVariables = Variables.builder().addAll(variables)
        .add("response", Shape.object("the response's properties are status and headers",
            Map.of("status", Shape.leaf("a number"), "headers", Shape.map(text))))
        .build();
  }

  /**
   * What parse time knows of a request's properties: a number, a boolean, cookies or a principal
   * where the name says so, else a text.
   */
  private static Map<String, Shape> requestShapes(Set<String> properties) {
    Shape text = Shape.leaf("a text");
    Shape cookie = Shape.object("a cookie's properties are name and value", Map.of("name", text, "value", text));
    Map<String, Shape> request = new java.util.HashMap<>();
    for (String name : properties) {
      request.put(name, switch (name) {
        case "userPrincipal" -> Shape.object("a principal's property is name", Map.of("name", text));
        case "cookies" -> Shape.array("an array of cookies", cookie);
        case "serverPort", "contentLength", "remotePort", "localPort" -> Shape.leaf("a number");
        case "secure" -> Shape.leaf("a boolean");
        default -> text;
      });
    }
    return request;
  }

  /** The door's sandbox. */
  public Sandbox sandbox() {
    return sandbox;
  }

  /** {@link #NAMES}, and what parse time knows of their values. */
  public Variables variables() {
    return variables;
  }

  /** What a rule's {@code count-when} and {@code cost-after} read: {@link #variables()} and {@code #response}. */
  public Variables countVariables() {
    return countVariables;
  }

  /**
   * A pipeline for conditions checked at configuration time: its logger and throttle are never
   * used.
   */
  public Pipeline checking() {
    return Pipeline.builder(sandbox, log).build();
  }

  /**
   * The door's pipeline: a request never fails for an expression; one without a key shares a
   * bucket or gets a 400, as {@code missingKey} says.
   */
  public Pipeline pipeline(MissingKey missingKey, LogThrottle throttle) {
    return Pipeline.builder(sandbox, log)
        .onError(Pipeline.OnError.CORRECT)
        .missingKey(missingKey == MissingKey.REJECT ? Pipeline.MissingKey.REJECT : Pipeline.MissingKey.SHARED_BUCKET)
        .subject("request")
        .rejection("rejected with 400")
        .throttle(throttle)
        .build();
  }

  /**
   * The evaluation context of one rule for one request, holding the {@code names} its expressions
   * use: the others are not computed.
   */
  public EvaluationContext context(RequestView view, Map<String, String> pathVariables, Set<String> names) {
    SandboxContext context = sandbox.context();
    for (String name : names) {
      context.setVariable(name, switch (name) {
        case "request" -> view.request();
        case "clientIp" -> view.clientIp();
        case "clientNetwork" -> view.clientNetwork();
        case "path" -> view.path();
        case "method" -> view.method();
        case "headers" -> view.headers();
        case "params" -> view.params();
        case "pathVariables" -> pathVariables;
        case "principal" -> view.principal();
        default -> throw new IllegalStateException("no value for #" + name); // NAMES and this switch disagree
      });
    }
    return context;
  }
}

package dev.ratelimit.internal.expression;

import java.lang.reflect.Field;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import org.springframework.expression.BeanResolver;
import org.springframework.expression.Expression;
import org.springframework.expression.MethodResolver;
import org.springframework.expression.ParseException;
import org.springframework.expression.PropertyAccessor;
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
import org.springframework.expression.spel.support.MapAccessor;

/**
 * The one sandbox of rate-limit expressions (the servlet filter's rules, {@code @RateLimited}):
 * what an expression may do, checked when it is parsed, and the {@link SandboxContext} it is
 * evaluated in, made from the same settings, so that what the context would refuse on every
 * evaluation is refused when the expression is parsed.
 *
 * <p>Never allowed: type references ({@code T(...)}), constructors, function calls
 * ({@code #f(...)}), assignments, unknown variables, reading properties of nothing (a bare
 * {@code clientIp} for {@code #clientIp}), a value's class ({@code .class}, {@code getClass()},
 * or any property or method that gives a {@code Class}, such as an enum's
 * {@code declaringClass}) and {@code Object}'s other final methods. What a door may allow, as
 * explicit settings:
 * <ul>
 *   <li>{@link Builder#properties}: its own property readers (the filter's request properties),
 *       tried first;</li>
 *   <li>{@link Builder#dataObjects}: reading maps by key and objects by getter (read-only), and
 *       calling instance methods of data objects ({@code @RateLimited}); without it, method calls
 *       are refused. A variable of a final class ({@link Shape#of}) is followed when parsed: a
 *       property or method its values do not have, or that may not be used, is refused then;</li>
 *   <li>{@link Builder#beans}: {@code @name} bean references, to beans that exist; without it,
 *       refused.</li>
 * </ul>
 * Each place's {@link Variables} say which variables exist and what their values hold.
 *
 * <p>Internal: shared by the servlet filter and the Spring Boot starter. Not an API; it may change
 * in any release.
 */
public final class Sandbox {
  private static final SpelExpressionParser PARSER = new SpelExpressionParser();
  /** Methods no value's data-binding resolver calls: {@code Object}'s final ones. */
  private static final Set<String> UNREACHABLE_METHODS = Set.of("getClass", "wait", "notify", "notifyAll");

  final List<PropertyAccessor> propertyAccessors;
  final List<MethodResolver> methodResolvers;
  final BeanResolver beans;
  private final Predicate<String> beanExists;
  /** How data objects are read and called; null without {@link Builder#dataObjects}. */
  private final DataObjects data;
  /** Whether the door has property readers of its own, tried before the data objects' one. */
  private final boolean ownProperties;

  private Sandbox(Builder b) {
    List<PropertyAccessor> accessors = new ArrayList<>(b.properties);
    this.data = b.dataObjects ? new DataObjects() : null;
    if (b.dataObjects) {
      accessors.add(new MapAccessor(false));
      accessors.add(data.properties);
    }
    this.propertyAccessors = List.copyOf(accessors);
    this.methodResolvers = b.dataObjects ? List.of(data.methods) : List.of();
    this.beans = b.beans;
    this.beanExists = b.beanExists;
    this.ownProperties = !b.properties.isEmpty();
  }

  /** A sandbox that allows nothing but what every one allows. */
  public static Builder builder() {
    return new Builder();
  }

  /** Whether method calls are allowed. */
  boolean allowsMethodCalls() {
    return !methodResolvers.isEmpty();
  }

  /** A new context to evaluate expressions of this sandbox in, with no variable set. */
  public SandboxContext context() {
    return new SandboxContext(this);
  }

  /**
   * Parses {@code text} and checks it against this sandbox and {@code variables}.
   *
   * @param what names the expression in messages, e.g. {@code rule 'api': key}
   * @throws IllegalArgumentException naming {@code what}, the expression and what is wrong
   */
  public Expression parse(String text, String what, Variables variables) {
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
    new Check(text, what, variables).nodes(ast);
    checkSteps(ast, false, text, what, variables);
    return expression;
  }

  /** The variables {@code expression} (parsed by a sandbox) reads, {@code this} and {@code root} aside. */
  public static Set<String> variables(Expression expression) {
    Set<String> names = new HashSet<>();
    collect(((SpelExpression) expression).getAST(), names);
    names.remove("this");
    names.remove("root");
    return Set.copyOf(names);
  }

  private static void collect(SpelNode node, Set<String> names) {
    if (node instanceof VariableReference) {
      names.add(node.toStringAST().substring(1));
    }
    for (int i = 0; i < node.getChildCount(); i++) {
      collect(node.getChild(i), names);
    }
  }

  /**
   * Whether {@code expression} (parsed by a sandbox) gives the same value every time: no variable,
   * property, index, call or reference ({@code 10}, {@code 2 * 3}).
   */
  static boolean isConstant(Expression expression) {
    return isConstant(((SpelExpression) expression).getAST());
  }

  private static boolean isConstant(SpelNode node) {
    if (node instanceof VariableReference || node instanceof PropertyOrFieldReference || node instanceof MethodReference
        || node instanceof BeanReference || node instanceof TypeReference || node instanceof ConstructorReference
        || node instanceof FunctionReference || node instanceof Indexer) {
      return false;
    }
    for (int i = 0; i < node.getChildCount(); i++) {
      if (!isConstant(node.getChild(i))) {
        return false;
      }
    }
    return true;
  }

  /** The refusals of one expression's nodes. */
  private final class Check {
    private final String text;
    private final String what;
    private final Variables variables;

    Check(String text, String what, Variables variables) {
      this.text = text;
      this.what = what;
      this.variables = variables;
    }

    void nodes(SpelNode node) {
      String refused = null;
      if (node instanceof TypeReference) {
        refused = "type references T(...) are";
      } else if (node instanceof ConstructorReference) {
        refused = "constructors (new ...) are";
      } else if (node instanceof FunctionReference) {
        refused = "function calls are";
      } else if (node instanceof Assign || node instanceof OpInc || node instanceof OpDec) {
        refused = "assignments are";
      } else if (node instanceof MethodReference method) {
        if (!allowsMethodCalls()) {
          refused = "method calls are";
        } else if (UNREACHABLE_METHODS.contains(method.getName())) {
          refused = method.getName() + "() is";
        }
      } else if (node instanceof PropertyOrFieldReference property && property.getName().equals("class")) {
        refused = "a value's class is";
      } else if (node instanceof BeanReference bean) {
        if (beans == null) {
          refused = "bean references are";
        } else if (!beanExists.test(bean.getName())) {
          throw new IllegalArgumentException(what + " expression '" + text + "' reads @" + bean.getName()
              + ", which is not a bean of the application");
        }
      } else if (node instanceof VariableReference) {
        String name = node.toStringAST().substring(1);
        if (!variables.contains(name)) {
          throw new IllegalArgumentException(what + " expression '" + text + "' reads #" + name
              + ", an unknown variable; the variables are " + variables.describe());
        }
      }
      if (refused != null) {
        throw refused(text, what, variables, refused, node.toStringAST());
      }
      for (int i = 0; i < node.getChildCount(); i++) {
        nodes(node.getChild(i));
      }
    }
  }

  /**
   * The refusal of {@code text} for what {@code refused} names ({@code "assignments are"}), at
   * {@code at}, saying what to use instead.
   */
  private IllegalArgumentException refused(String text, String what, Variables variables, String refused, String at) {
    return new IllegalArgumentException(what + " expression '" + text + "' is refused: " + refused
        + " not allowed in rate-limit expressions (at '" + at + "'); use the variables (" + variables.describe()
        + ")" + (allowsMethodCalls() ? ", their properties and methods" : ", indexing such as #map['key']")
        + " and operators");
  }

  /**
   * Refuses a step the evaluation could never take: a chain that starts at a variable
   * ({@code #request.remoteAddr}) is followed step by step through its {@link Shape}, so that a
   * typo, or a property of a map or a text ({@code #headers.Authorization}), fails here instead of
   * on every evaluation. A bare name ({@code clientIp} for {@code #clientIp}) reads a property of
   * nothing (the root object is null), and is refused too. From a value of a final class
   * ({@link Shape#of}), method calls are followed too ({@link #typed}).
   *
   * @param relative whether {@code node} reads from a value before it (a chain's step, a selection's element)
   */
  private void checkSteps(SpelNode node, boolean relative, String text, String what, Variables variables) {
    if (node instanceof PropertyOrFieldReference property && !relative) {
      throw new IllegalArgumentException(what + " expression '" + text + "' reads '" + property.getName()
          + "' of nothing; variables start with #, e.g. #" + property.getName());
    }
    if (node instanceof CompoundExpression && node.getChildCount() > 0
        && node.getChild(0) instanceof VariableReference variable) {
      String name = variable.toStringAST().substring(1);
      Shape shape = variables.shape(name);
      String path = "#" + name;
      String[] why = new String[1];
      for (int i = 1; i < node.getChildCount() && !shape.isAny(); i++) {
        SpelNode step = node.getChild(i);
        if (shape.type() != null) {
          Class<?> type = shape.type();
          shape = typed(type, step, path, text, what, variables);
          path = path + "." + (step instanceof MethodReference call ? call.getName() + "()" : step.toStringAST());
        } else if (step instanceof PropertyOrFieldReference property) {
          shape = shape.property(property.getName(), path, why);
          if (shape == null) {
            throw new IllegalArgumentException(what + " expression '" + text + "' reads '" + property.getName()
                + "' of " + path + ", which has no such property; " + why[0]);
          }
          path = path + "." + property.getName();
        } else if (step instanceof Indexer) {
          shape = shape.indexed();
          path = path + "[...]";
        } else {
          shape = Shape.ANY; // a selection, a projection, a method call: not followed
        }
      }
    }
    boolean elements = node instanceof Selection || node instanceof Projection;
    for (int i = 0; i < node.getChildCount(); i++) {
      checkSteps(node.getChild(i), relative || elements || (node instanceof CompoundExpression && i > 0),
          text, what, variables);
    }
  }

  /**
   * The shape of what {@code step} gives when taken from a value of the final class {@code type}
   * at {@code path}: the property or method the evaluation would use is looked up now, by the same
   * rules ({@link DataObjects}), and a step no value of the class could take fails here instead of
   * on every evaluation, naming the property or method.
   */
  private Shape typed(Class<?> type, SpelNode step, String path, String text, String what, Variables variables) {
    boolean nullSafe = step instanceof PropertyOrFieldReference p ? p.isNullSafe()
        : step instanceof MethodReference m && m.isNullSafe();
    if (data == null || (nullSafe && type == Optional.class)) {
      return Shape.ANY; // ?. on an Optional reads the value it holds, of a type not known here
    }
    String a = path + ", a " + type.getName();
    if (step instanceof PropertyOrFieldReference property) {
      String name = property.getName();
      if (ownProperties || Map.class.isAssignableFrom(type)) {
        return Shape.ANY; // the door's readers, or the map's entries, are tried first
      }
      Member member = data.properties.member(type, name);
      if (member != null) {
        return Shape.of(member instanceof Method getter ? getter.getReturnType() : ((Field) member).getType());
      }
      if (DataObjects.reflective(type)) {
        throw refused(text, what, variables, "reading a " + type.getName() + " (" + path + ") is", name);
      }
      Member any = DataObjects.ANY_PROPERTY.member(type, name);
      Class<?> gives = any instanceof Method getter ? getter.getReturnType() : any instanceof Field f ? f.getType() : null;
      if (gives != null && DataObjects.reflective(gives)) {
        throw refused(text, what, variables, "a " + gives.getName() + " (" + name + " of " + a + ") is", name);
      }
      throw new IllegalArgumentException(what + " expression '" + text + "' reads '" + name + "' of " + path
          + ", which has no such property; " + path + " is a " + type.getName() + (any instanceof Method getter
          ? ", whose " + getter.getName() + "() is not read: " + DataObjects.refusal(getter, type, false)
          : ": it has no public getter, accessor or field '" + name + "'"));
    }
    if (step instanceof MethodReference call) {
      String name = call.getName();
      int arguments = call.getChildCount();
      List<Method> named = data.methods.named(type, name);
      if (named.isEmpty()) {
        throw new IllegalArgumentException(what + " expression '" + text + "' calls " + name + "() on " + a
            + ", which has no such method");
      }
      List<Method> callable = new ArrayList<>();
      for (Method method : named) {
        if (DataObjects.refusal(method, type, true) == null) {
          callable.add(method);
        }
      }
      if (callable.isEmpty()) {
        Method first = named.get(0);
        if (DataObjects.reflective(first.getReturnType()) || DataObjects.reflective(type)) {
          throw refused(text, what, variables, DataObjects.reflective(type) ? "calling a " + type.getName() + " ("
              + path + ") is" : "a " + first.getReturnType().getName() + " (" + name + "() of " + a + ") is", name + "()");
        }
        throw new IllegalArgumentException(what + " expression '" + text + "' calls " + name + "() on " + a
            + ", whose " + name + "() is never called: " + DataObjects.refusal(first, type, true));
      }
      Set<Integer> takes = new TreeSet<>();
      Set<Class<?>> gives = new HashSet<>();
      for (Method method : callable) {
        takes.add(method.getParameterCount());
        if (method.getParameterCount() == arguments
            || (method.isVarArgs() && arguments >= method.getParameterCount() - 1)) {
          gives.add(method.getReturnType());
        }
      }
      if (gives.isEmpty()) {
        throw new IllegalArgumentException(what + " expression '" + text + "' calls " + name + "() with " + arguments
            + " argument" + (arguments == 1 ? "" : "s") + " on " + a + ", whose " + name + "() takes "
            + takes.stream().map(String::valueOf).collect(java.util.stream.Collectors.joining(" or ")));
      }
      return gives.size() == 1 ? Shape.of(gives.iterator().next()) : Shape.ANY;
    }
    return Shape.ANY; // an index, a selection, a projection: not followed
  }

  /** The settings of a sandbox. */
  public static final class Builder {
    private final List<PropertyAccessor> properties = new ArrayList<>();
    private boolean dataObjects;
    private BeanResolver beans;
    private Predicate<String> beanExists;

    private Builder() {}

    /** Property readers of the door's own values, tried before any other. */
    public Builder properties(PropertyAccessor... accessors) {
      properties.addAll(List.of(accessors));
      return this;
    }

    /**
     * Allows reading maps by key and objects through their getters (read-only), and calling
     * instance methods of data objects; never methods of {@code Object}, {@code Class} or a class
     * loader, nor static ones.
     */
    public Builder dataObjects() {
      this.dataObjects = true;
      return this;
    }

    /** Allows {@code @name} references to beans that {@code exists} knows, resolved by {@code resolver}. */
    public Builder beans(BeanResolver resolver, Predicate<String> exists) {
      this.beans = Objects.requireNonNull(resolver);
      this.beanExists = Objects.requireNonNull(exists);
      return this;
    }

    public Sandbox build() {
      return new Sandbox(this);
    }
  }
}

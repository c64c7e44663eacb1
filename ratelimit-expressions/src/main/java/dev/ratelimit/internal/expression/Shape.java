package dev.ratelimit.internal.expression;

import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.Objects;
import org.springframework.util.ClassUtils;

/**
 * What a variable holds, as far as parse time can tell: {@link Sandbox#parse} follows a chain of
 * properties and indexes from a variable ({@code #request.userPrincipal.name}) through shapes, and
 * refuses a step no value of that shape could take, so that a typo fails when the expression is
 * parsed instead of on every evaluation. {@link #ANY} is not followed.
 *
 * <p>Internal: shared by the servlet filter and the Spring Boot starter. Not an API; it may change
 * in any release.
 */
public final class Shape {
  private enum Kind { ANY, LEAF, MAP, ARRAY, OBJECT, TYPE }

  /** Anything: parse time does not follow it. */
  public static final Shape ANY = new Shape(Kind.ANY, null, null, Map.of(), null);

  private final Kind kind;
  /** What it is in messages ({@code a text}), or for an object what can be read of it. */
  private final String description;
  private final Shape element;
  private final Map<String, Shape> properties;
  /** For {@link Kind#TYPE}: the class of every value. */
  private final Class<?> type;

  private Shape(Kind kind, String description, Shape element, Map<String, Shape> properties, Class<?> type) {
    this.kind = kind;
    this.description = description;
    this.element = element;
    this.properties = properties;
    this.type = type;
  }

  /** A value with neither properties nor indexes, such as a text: {@code noun} is {@code "a text"}. */
  public static Shape leaf(String noun) {
    return new Shape(Kind.LEAF, Objects.requireNonNull(noun), null, Map.of(), null);
  }

  /** A map, read by index ({@code #headers['Name']}), whose values have the shape {@code values}. */
  public static Shape map(Shape values) {
    return new Shape(Kind.MAP, "a map", Objects.requireNonNull(values), Map.of(), null);
  }

  /** An array, read by index ({@code #request.cookies[0]}): {@code noun} is {@code "an array of cookies"}. */
  public static Shape array(String noun, Shape elements) {
    return new Shape(Kind.ARRAY, Objects.requireNonNull(noun), Objects.requireNonNull(elements), Map.of(), null);
  }

  /**
   * An object with exactly {@code properties}; {@code readable} says what they are in messages,
   * e.g. {@code "a cookie's properties are name and value"}.
   */
  public static Shape object(String readable, Map<String, Shape> properties) {
    return new Shape(Kind.OBJECT, Objects.requireNonNull(readable), null, Map.copyOf(properties), null);
  }

  /**
   * The values of a declared Java type, such as a method's parameter or return type. When the
   * type is a final class (a record, {@code String}, {@code UUID}, an enum whose constants have no
   * bodies, a primitive as its box), every value (but null) is of that very class, so a sandbox
   * that reads {@link Sandbox.Builder#dataObjects data objects} checks, when it parses, each
   * property read and method call on it by the rules it evaluates by. Any other type is
   * {@link #ANY}: a value may be of a subclass, with more methods.
   */
  public static Shape of(Class<?> type) {
    if (type == void.class) {
      return ANY;
    }
    Class<?> boxed = ClassUtils.resolvePrimitiveIfNecessary(type);
    if (boxed.isArray() || !Modifier.isFinal(boxed.getModifiers())) {
      return ANY;
    }
    return new Shape(Kind.TYPE, boxed.getName(), null, Map.of(), boxed);
  }

  boolean isAny() {
    return kind == Kind.ANY;
  }

  /** The class of every value, for a shape of {@link #of}; else null. */
  Class<?> type() {
    return type;
  }

  /** The shape of an index's result. */
  Shape indexed() {
    return kind == Kind.MAP || kind == Kind.ARRAY ? element : ANY;
  }

  /**
   * The shape of property {@code name} read from this shape at {@code path} ({@code #request.userPrincipal}),
   * or null with {@code why[0]} saying what can be read there instead.
   */
  Shape property(String name, String path, String[] why) {
    switch (kind) {
      case ANY:
      case TYPE: // followed by the sandbox, whose rules decide
        return ANY;
      case OBJECT: {
        Shape found = properties.get(name);
        if (found == null) {
          why[0] = description;
        }
        return found;
      }
      case MAP:
        why[0] = path + " is a map: index it, " + path + "['" + name + "']";
        return null;
      case ARRAY:
        why[0] = path + " is " + description + ": index it, " + path + "[0]." + name;
        return null;
      default:
        why[0] = path + " is " + description + ": it has no properties";
        return null;
    }
  }
}

package dev.ratelimit.internal.expression;

import java.util.Map;
import java.util.Objects;

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
  private enum Kind { ANY, LEAF, MAP, ARRAY, OBJECT }

  /** Anything: parse time does not follow it. */
  public static final Shape ANY = new Shape(Kind.ANY, null, null, Map.of());

  private final Kind kind;
  /** What it is in messages ({@code a text}), or for an object what can be read of it. */
  private final String description;
  private final Shape element;
  private final Map<String, Shape> properties;

  private Shape(Kind kind, String description, Shape element, Map<String, Shape> properties) {
    this.kind = kind;
    this.description = description;
    this.element = element;
    this.properties = properties;
  }

  /** A value with neither properties nor indexes, such as a text: {@code noun} is {@code "a text"}. */
  public static Shape leaf(String noun) {
    return new Shape(Kind.LEAF, Objects.requireNonNull(noun), null, Map.of());
  }

  /** A map, read by index ({@code #headers['Name']}), whose values have the shape {@code values}. */
  public static Shape map(Shape values) {
    return new Shape(Kind.MAP, "a map", Objects.requireNonNull(values), Map.of());
  }

  /** An array, read by index ({@code #request.cookies[0]}): {@code noun} is {@code "an array of cookies"}. */
  public static Shape array(String noun, Shape elements) {
    return new Shape(Kind.ARRAY, Objects.requireNonNull(noun), Objects.requireNonNull(elements), Map.of());
  }

  /**
   * An object with exactly {@code properties}; {@code readable} says what they are in messages,
   * e.g. {@code "a cookie's properties are name and value"}.
   */
  public static Shape object(String readable, Map<String, Shape> properties) {
    return new Shape(Kind.OBJECT, Objects.requireNonNull(readable), null, Map.copyOf(properties));
  }

  boolean isAny() {
    return kind == Kind.ANY;
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

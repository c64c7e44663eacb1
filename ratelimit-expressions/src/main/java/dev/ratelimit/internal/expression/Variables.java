package dev.ratelimit.internal.expression;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The variables the expressions of one place may read ({@code #clientIp}, a method's parameters),
 * with the {@link Shape} of each; {@code #this} and {@code #root} always. {@link Sandbox#parse}
 * refuses any other.
 *
 * <p>Internal: shared by the servlet filter and the Spring Boot starter. Not an API; it may change
 * in any release.
 */
public final class Variables {
  private final Map<String, Shape> shapes;
  private final String description;

  private Variables(Map<String, Shape> shapes, String description) {
    this.shapes = Collections.unmodifiableMap(new LinkedHashMap<>(shapes));
    this.description = description != null ? description
        : shapes.keySet().stream().map(v -> "#" + v).collect(Collectors.joining(", "));
  }

  /** A builder of variables, in the order messages list them. */
  public static Builder builder() {
    return new Builder();
  }

  /** Whether {@code name} may be read. */
  boolean contains(String name) {
    return shapes.containsKey(name) || name.equals("this") || name.equals("root");
  }

  /** The shape of variable {@code name}; {@link Shape#ANY} for {@code #this}, {@code #root} or an unknown one. */
  Shape shape(String name) {
    return shapes.getOrDefault(name, Shape.ANY);
  }

  /** The variables as messages list them. */
  String describe() {
    return description;
  }

  /** Collects variables. */
  public static final class Builder {
    private final Map<String, Shape> shapes = new LinkedHashMap<>();
    private String description;

    private Builder() {}

    /** Variable {@code name}, of any shape. */
    public Builder add(String name) {
      return add(name, Shape.ANY);
    }

    /** Variable {@code name}, holding values of {@code shape}. */
    public Builder add(String name, Shape shape) {
      shapes.put(name, shape);
      return this;
    }

    /** Every variable of {@code other}. */
    public Builder addAll(Variables other) {
      shapes.putAll(other.shapes);
      return this;
    }

    /** How messages list the variables; default {@code #a, #b, #c}. */
    public Builder describedAs(String description) {
      this.description = description;
      return this;
    }

    public Variables build() {
      return new Variables(shapes, description);
    }
  }
}

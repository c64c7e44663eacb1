package dev.ratelimit.internal.http;

import dev.ratelimit.internal.expression.ReadOnlyProperties;
import java.security.Principal;
import java.util.Set;
import java.util.function.Function;
import org.springframework.expression.AccessException;
import org.springframework.expression.EvaluationContext;

/**
 * What a door's sandbox reads: the side-effect-free properties of its request type ({@code
 * #request.scheme}), a principal's {@code name}, a cookie's {@code name} and {@code value}, and
 * {@code #response.status} and {@code #response.headers}; nothing else. Each door names its request's properties and reads them
 * with direct getter calls, never reflectively.
 *
 * @param <R> the door's request type
 * @param <C> the door's cookie type
 */
public abstract class DoorProperties<R, C> extends ReadOnlyProperties {
  private final Class<R> requestType;
  private final Class<C> cookieType;
  private final Function<C, String> cookieName;
  private final Function<C, String> cookieValue;
  private final Set<String> names;

  /**
   * @param names the request's properties an expression may read
   * @param cookieName a cookie's name
   * @param cookieValue a cookie's value
   */
  protected DoorProperties(Class<R> requestType, Class<C> cookieType, Set<String> names,
      Function<C, String> cookieName, Function<C, String> cookieValue) {
    this.requestType = requestType;
    this.cookieType = cookieType;
    this.names = Set.copyOf(names);
    this.cookieName = cookieName;
    this.cookieValue = cookieValue;
  }

  /** The request's properties an expression may read. */
  public final Set<String> names() {
    return names;
  }

  /** The request's property {@code name}, one of {@link #names()}. */
  protected abstract Object property(R request, String name) throws AccessException;

  @Override
  public final boolean canRead(EvaluationContext context, Object target, String name) {
    if (requestType.isInstance(target)) {
      return names.contains(name);
    }
    if (target instanceof Principal) {
      return name.equals("name");
    }
    if (cookieType.isInstance(target)) {
      return name.equals("name") || name.equals("value");
    }
    if (target instanceof ResponseView) {
      return name.equals("status") || name.equals("headers");
    }
    return false;
  }

  @Override
  protected final Object value(Object target, String name) throws AccessException {
    if (requestType.isInstance(target)) {
      return property(requestType.cast(target), name);
    }
    if (target instanceof Principal p) {
      return p.getName();
    }
    if (target instanceof ResponseView r) {
      return name.equals("status") ? r.status() : r.headers();
    }
    C cookie = cookieType.cast(target);
    return name.equals("name") ? cookieName.apply(cookie) : cookieValue.apply(cookie);
  }
}

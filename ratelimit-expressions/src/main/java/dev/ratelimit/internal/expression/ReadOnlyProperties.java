package dev.ratelimit.internal.expression;

import org.springframework.expression.AccessException;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.PropertyAccessor;
import org.springframework.expression.TypedValue;

/**
 * A property accessor of the sandbox: reads only the properties {@link #canRead} allows, through
 * {@link #value} (getters called directly, never reflectively), and writes nothing. The filters'
 * request accessors, servlet and reactive, are its subclasses.
 */
public abstract class ReadOnlyProperties implements PropertyAccessor {

  /** The value of {@code name} of {@code target}, one that {@link #canRead} allows. */
  protected abstract Object value(Object target, String name) throws AccessException;

  @Override
  public Class<?>[] getSpecificTargetClasses() {
    return null; // asked for every target: canRead decides
  }

  @Override
  public final TypedValue read(EvaluationContext context, Object target, String name) throws AccessException {
    if (!canRead(context, target, name)) {
      throw new AccessException("cannot read '" + name + "' of " + target.getClass().getName());
    }
    return new TypedValue(value(target, name));
  }

  @Override
  public final boolean canWrite(EvaluationContext context, Object target, String name) {
    return false;
  }

  @Override
  public final void write(EvaluationContext context, Object target, String name, Object newValue)
      throws AccessException {
    throw new AccessException("rate-limit expressions cannot write '" + name + "'");
  }
}

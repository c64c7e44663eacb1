package dev.ratelimit.internal.expression;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * How the value of a key or cost expression becomes a key or a cost, the same for every front door.
 *
 * <p>A key is one value that names who or what is limited, and reads the same every time:
 * <ul>
 *   <li>a text (any {@link CharSequence}): itself; blank is no key (a missing key);</li>
 *   <li>a number, a boolean, a character: as Java prints it ({@code 42}, {@code 1.5}, {@code true});</li>
 *   <li>an enum constant: its name; a {@link UUID}: its canonical text;</li>
 *   <li>a collection or a map of such values (non-empty, no null in it): their texts in its
 *       order, {@code [a, b]} or {@code {id=42}};</li>
 *   <li>null, or anything else (an array, a principal, an object of the application's): no key.
 *       An object's {@code toString} is not used: it often prints its identity, new for every
 *       instance (a bucket per call), or fields that change, or more than who is asking; read
 *       one of its values ({@code #user.id}).</li>
 * </ul>
 * A cost is a number ({@link Number}, or a decimal text such as a query parameter's), rounded up
 * to a whole one: never cheaper than asked.
 *
 * <p>Internal: shared by the servlet filter and the Spring Boot starter. Not an API; it may change
 * in any release.
 */
public final class Values {
  /** A decimal number as text, without exponent. */
  private static final Pattern DECIMAL = Pattern.compile("\\s*[+-]?\\d{1,40}(\\.\\d{1,40})?\\s*");

  private Values() {}

  /** The key {@code value} stands for, or null when it is none ({@link #whyNoKey} says why). */
  static String key(Object value) {
    if (value instanceof String s) {
      return s.isBlank() ? null : s; // the common case first
    }
    if (!isKey(value)) {
      return null;
    }
    String text = text(value);
    return text.isBlank() ? null : text;
  }

  /** Why {@code value} is no key, for a log line: {@code gave null}, {@code gave a blank text}, .... */
  static String whyNoKey(Object value) {
    if (value == null) {
      return "gave null";
    }
    if (value instanceof CharSequence || isKey(value)) {
      return "gave a blank text";
    }
    return "gave " + (value instanceof Collection<?> || value instanceof Map<?, ?> ? "a " + value.getClass().getName()
        + " that is empty or holds a value that is not a key" : "a " + value.getClass().getTypeName())
        + ", which is not a key: a key is a text, a number, a boolean, a character, an enum, a UUID, or a"
        + " collection or map of them (read one of its values, such as #user.id)";
  }

  private static boolean isKey(Object value) {
    if (value == null) {
      return false;
    }
    if (value instanceof CharSequence || value instanceof Number || value instanceof Boolean
        || value instanceof Character || value instanceof Enum<?> || value instanceof UUID) {
      return !(value instanceof Number) || ownText(value.getClass());
    }
    if (value instanceof Collection<?> collection) {
      if (collection.isEmpty()) {
        return false;
      }
      for (Object element : collection) {
        if (!isKey(element)) {
          return false;
        }
      }
      return true;
    }
    if (value instanceof Map<?, ?> map) {
      if (map.isEmpty()) {
        return false;
      }
      for (Map.Entry<?, ?> entry : map.entrySet()) {
        if (!isKey(entry.getKey()) || !isKey(entry.getValue())) {
          return false;
        }
      }
      return true;
    }
    return false;
  }

  /** The types whose values (non-empty, for the last two) are keys. */
  private static final List<Class<?>> KEY_TYPES = List.of(CharSequence.class, Number.class, Boolean.class,
      Character.class, Enum.class, UUID.class, Collection.class, Map.class);

  /**
   * Whether a value declared as {@code type} (a method's parameter) may be a key: false for an
   * array, and for a class (not an interface) that is neither a key type nor a supertype of one,
   * such as a class of the application's; true for a primitive, {@code Object}, an interface (an
   * enum may implement it), and the key types.
   */
  public static boolean mayBeKey(Class<?> type) {
    if (type.isPrimitive()) {
      return type != void.class;
    }
    if (type.isArray()) {
      return false;
    }
    if (type.isInterface()) {
      return true;
    }
    for (Class<?> key : KEY_TYPES) {
      if (key.isAssignableFrom(type) || type.isAssignableFrom(key)) {
        return true;
      }
    }
    return false;
  }

  /** Whether instances of {@code type} (a number of the application's, say) print a text of their own. */
  private static boolean ownText(Class<?> type) {
    return OWN_TEXT.get(type);
  }

  private static final ClassValue<Boolean> OWN_TEXT = new ClassValue<>() {
    @Override
    protected Boolean computeValue(Class<?> type) {
      try {
        return type.getMethod("toString").getDeclaringClass() != Object.class;
      } catch (NoSuchMethodException e) {
        return false; // every class has one
      }
    }
  };

  /** The text of a value {@link #isKey} accepts. */
  private static String text(Object value) {
    if (value instanceof Enum<?> e) {
      return e.name(); // not toString: that is for people, and may change
    }
    if (value instanceof Collection<?> collection) {
      StringBuilder sb = new StringBuilder("[");
      for (Iterator<?> it = collection.iterator(); it.hasNext(); ) {
        sb.append(text(it.next())).append(it.hasNext() ? ", " : "");
      }
      return sb.append(']').toString();
    }
    if (value instanceof Map<?, ?> map) {
      StringBuilder sb = new StringBuilder("{");
      for (Iterator<? extends Map.Entry<?, ?>> it = map.entrySet().iterator(); it.hasNext(); ) {
        Map.Entry<?, ?> entry = it.next();
        sb.append(text(entry.getKey())).append('=').append(text(entry.getValue())).append(it.hasNext() ? ", " : "");
      }
      return sb.append('}').toString();
    }
    return value.toString();
  }

  /** What {@link #cost} gives for a value that is not a number. */
  static final long NOT_A_NUMBER = Long.MIN_VALUE;

  /**
   * The cost {@code value} asks for, rounded up to a whole number: 0 for a number of at most 0,
   * {@link Long#MAX_VALUE} for any larger than that, {@link #NOT_A_NUMBER} for what is not a number
   * (nor a decimal text), or not finite. The caller checks the range.
   */
  static long cost(Object value) {
    if (value instanceof Integer i) {
      return Math.max(i, 0); // the common case first
    }
    BigDecimal number = number(value);
    if (number == null) {
      return NOT_A_NUMBER;
    }
    if (number.signum() <= 0) {
      return 0;
    }
    if (number.compareTo(BigDecimal.ONE) <= 0) {
      return 1; // without rounding: 1E-999999999 would take long to round
    }
    if (number.compareTo(LONG_MAX) >= 0) {
      return Long.MAX_VALUE;
    }
    return number.setScale(0, RoundingMode.CEILING).longValueExact();
  }

  /** {@link #cost} of an actual cost, which may be 0: {@link #NOT_A_NUMBER} for a negative one too. */
  static long actualCost(Object value) {
    BigDecimal number = value instanceof Integer i ? BigDecimal.valueOf(i) : number(value);
    if (number == null || number.signum() < 0) {
      return NOT_A_NUMBER;
    }
    return number.signum() == 0 ? 0 : cost(number);
  }

  private static final BigDecimal LONG_MAX = BigDecimal.valueOf(Long.MAX_VALUE);

  private static BigDecimal number(Object value) {
    try {
      if (value instanceof BigDecimal d) {
        return d;
      }
      if (value instanceof BigInteger i) {
        return new BigDecimal(i);
      }
      if (value instanceof Double || value instanceof Float) {
        double d = ((Number) value).doubleValue();
        return Double.isFinite(d) ? BigDecimal.valueOf(d) : null;
      }
      if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte
          || value instanceof java.util.concurrent.atomic.AtomicInteger
          || value instanceof java.util.concurrent.atomic.AtomicLong) {
        return BigDecimal.valueOf(((Number) value).longValue());
      }
      if (value instanceof CharSequence s && DECIMAL.matcher(s).matches()) {
        return new BigDecimal(s.toString().trim());
      }
    } catch (NumberFormatException e) {
      return null;
    }
    return null;
  }
}

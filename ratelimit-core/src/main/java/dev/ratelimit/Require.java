package dev.ratelimit;

/** Argument checks whose messages name the offending value. Used by the whole project. */
public final class Require {
  private Require() {}

  /**
   * Throws an {@link IllegalArgumentException} with the formatted message unless {@code ok}.
   *
   * @param ok the condition that must hold
   * @param format a {@link String#format} pattern naming the value and, where it helps, the fix
   * @param args the values
   */
  public static void argument(boolean ok, String format, Object... args) {
    if (!ok) {
      throw new IllegalArgumentException(String.format(java.util.Locale.ROOT, format, args));
    }
  }

  /** Throws an {@link IllegalStateException} with the formatted message unless {@code ok}. */
  public static void state(boolean ok, String format, Object... args) {
    if (!ok) {
      throw new IllegalStateException(String.format(java.util.Locale.ROOT, format, args));
    }
  }
}

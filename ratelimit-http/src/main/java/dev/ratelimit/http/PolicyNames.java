package dev.ratelimit.http;

import java.text.Normalizer;

/**
 * Policy names as the limit headers carry them. {@code RateLimit-Policy} and {@code RateLimit}
 * identify a policy by a structured-field String (RFC 9651, as draft-ietf-httpapi-ratelimit-headers-11
 * requires), which holds printable ASCII only, {@code "} and {@code \} escaped: a name with any
 * other character cannot be written there, so the filter's rules and the starter's policies refuse
 * it when they are configured. No servlet type here: the starter checks names without the servlet
 * API too.
 */
public final class PolicyNames {
  private PolicyNames() {}

  /** Whether {@code name} can be a structured-field String: printable ASCII, space included. */
  public static boolean fitsHeader(String name) {
    if (name == null) {
      return false;
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c < 0x20 || c > 0x7e) {
        return false;
      }
    }
    return true;
  }

  /**
   * Refuses a name the limit headers cannot carry.
   *
   * @param usedBy what names the policy, for the message, e.g. {@code "rule 'api'"}
   * @throws IllegalArgumentException naming the policy, where it is used and an ASCII name to use
   */
  public static void requireFitsHeader(String name, String usedBy) {
    if (!fitsHeader(name)) {
      throw new IllegalArgumentException("policy name '" + name + "' (" + usedBy + ") cannot be written in the"
          + " RateLimit and RateLimit-Policy headers, whose policy names are structured-field strings of printable"
          + " ASCII only (RFC 9651); name it with ASCII letters, digits and punctuation, such as '"
          + asciiSuggestion(name) + "'");
    }
  }

  /** {@code name} as an sf-string: quoted, {@code "} and {@code \} escaped; it must {@link #fitsHeader fit}. */
  public static String sfString(String name) {
    StringBuilder sb = new StringBuilder(name.length() + 2).append('"');
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c == '"' || c == '\\') {
        sb.append('\\');
      }
      sb.append(c);
    }
    return sb.append('"').toString();
  }

  /** An ASCII name close to {@code name}: accents dropped ({@code café} is {@code cafe}), anything else a '-'. */
  public static String asciiSuggestion(String name) {
    if (name == null || name.isEmpty()) {
      return "api";
    }
    String decomposed = Normalizer.normalize(name, Normalizer.Form.NFD);
    StringBuilder sb = new StringBuilder(decomposed.length());
    for (int i = 0; i < decomposed.length(); i++) {
      char c = decomposed.charAt(i);
      if (Character.getType(c) == Character.NON_SPACING_MARK) {
        continue;
      }
      if (c >= 0x20 && c <= 0x7e) {
        sb.append(c);
      } else if (sb.length() > 0 && sb.charAt(sb.length() - 1) != '-') {
        sb.append('-');
      }
    }
    String s = sb.toString().strip();
    while (s.endsWith("-")) {
      s = s.substring(0, s.length() - 1);
    }
    return s.isEmpty() ? "api" : s;
  }
}

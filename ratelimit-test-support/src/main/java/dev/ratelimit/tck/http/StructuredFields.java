package dev.ratelimit.tck.http;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A strict parser of RFC 9651 structured-field Lists, for tests that read the limit headers back
 * as a client would: every member an Item or an Inner List, with Parameters; bare items Integer,
 * Decimal, String, Token, Byte Sequence, Boolean, Date and Display String. It follows the RFC's
 * parsing algorithm (section 4.2) and refuses what it refuses: a character outside an sf-string's
 * printable ASCII, an escape other than {@code \"} and {@code \\}, a trailing comma, an integer of
 * more than 15 digits, a key in upper case, a Display String that is not UTF-8.
 */
public final class StructuredFields {
  /** A Token bare item, told apart from a String. */
  public record Token(String value) {}

  /** A Display String bare item ({@code %"..."}), its percent-encoded UTF-8 decoded. */
  public record DisplayString(String value) {}

  /** A Date bare item ({@code @1659578233}), seconds since the epoch. */
  public record Date(long epochSeconds) {}

  /** A Byte Sequence bare item ({@code :base64:}). */
  public record ByteSequence(byte[] bytes) {}

  /** A member of a List: an Item (a bare item) or an Inner List (a list of Items), with Parameters. */
  public record Member(Object value, Map<String, Object> params) {
    /** The bare item: a {@link String}, {@link Token}, {@link Long}, {@link BigDecimal}, {@link Boolean}... */
    public Object value() {
      return value;
    }

    /** The Integer parameter {@code key}; fails when it is absent or not an Integer. */
    public long integer(String key) {
      Object v = params.get(key);
      if (!(v instanceof Long l)) {
        throw new IllegalArgumentException("parameter " + key + " is not an Integer: " + v + " in " + this);
      }
      return l;
    }

    /** The bare item as a String; fails when it is another type (a Token, a Display String...). */
    public String string() {
      if (!(value instanceof String s)) {
        throw new IllegalArgumentException("not a String: " + value);
      }
      return s;
    }
  }

  private final String s;
  private int i;

  private StructuredFields(String s) {
    this.s = s;
  }

  /**
   * Parses a List field value; several field lines of one response are joined with {@code ", "}
   * first, as RFC 9651 combines them.
   *
   * @throws IllegalArgumentException naming the position of what a strict parser refuses
   */
  public static List<Member> parseList(String field) {
    Objects.requireNonNull(field, "no field");
    StructuredFields p = new StructuredFields(field);
    p.skipSp();
    List<Member> members = new ArrayList<>();
    while (p.i < p.s.length()) {
      members.add(p.peek() == '(' ? p.innerList() : p.item());
      p.skipOws();
      if (p.i >= p.s.length()) {
        return members;
      }
      p.expect(',');
      p.skipOws();
      if (p.i >= p.s.length()) {
        throw p.fail("a trailing comma");
      }
    }
    return members;
  }

  /** Parses the field lines of one field, combined as RFC 9651 section 4.2 says. */
  public static List<Member> parseList(List<String> fieldLines) {
    if (fieldLines.isEmpty()) {
      throw new IllegalArgumentException("no field line");
    }
    return parseList(String.join(", ", fieldLines));
  }

  private Member innerList() {
    expect('(');
    List<Member> items = new ArrayList<>();
    while (true) {
      skipSp();
      if (i < s.length() && peek() == ')') {
        i++;
        return new Member(List.copyOf(items), parameters());
      }
      items.add(item());
      if (i >= s.length() || (peek() != ' ' && peek() != ')')) {
        throw fail("an inner list's item must be followed by a space or ')'");
      }
    }
  }

  private Member item() {
    Object value = bareItem();
    return new Member(value, parameters());
  }

  private Map<String, Object> parameters() {
    Map<String, Object> params = new LinkedHashMap<>();
    while (i < s.length() && peek() == ';') {
      i++;
      skipSp();
      String key = key();
      Object value = Boolean.TRUE;
      if (i < s.length() && peek() == '=') {
        i++;
        value = bareItem();
      }
      params.put(key, value); // a repeated key: the last value wins, as the RFC says
    }
    return params;
  }

  private Object bareItem() {
    if (i >= s.length()) {
      throw fail("a bare item");
    }
    char c = peek();
    if (c == '-' || isDigit(c)) {
      return number();
    }
    if (c == '"') {
      return string();
    }
    if (isAlpha(c) || c == '*') {
      return token();
    }
    if (c == ':') {
      return byteSequence();
    }
    if (c == '?') {
      i++;
      char b = i < s.length() ? s.charAt(i++) : 0;
      if (b != '0' && b != '1') {
        throw fail("a Boolean ?0 or ?1");
      }
      return b == '1';
    }
    if (c == '@') {
      i++;
      Object n = number();
      if (!(n instanceof Long l)) {
        throw fail("a Date's integer seconds");
      }
      return new Date(l);
    }
    if (c == '%') {
      return displayString();
    }
    throw fail("a bare item, not '" + c + "'");
  }

  private Object number() {
    int start = i;
    if (peek() == '-') {
      i++;
    }
    if (i >= s.length() || !isDigit(peek())) {
      throw fail("a digit");
    }
    int digits = 0;
    int integerDigits = -1;
    while (i < s.length()) {
      char c = peek();
      if (isDigit(c)) {
        digits++;
        i++;
      } else if (c == '.' && integerDigits < 0) {
        if (digits > 12) {
          throw fail("at most 12 digits before a Decimal's point");
        }
        integerDigits = digits;
        i++;
      } else {
        break;
      }
      if (integerDigits < 0 && digits > 15) {
        throw fail("an Integer of at most 15 digits");
      }
    }
    String text = s.substring(start, i);
    if (integerDigits < 0) {
      return Long.parseLong(text);
    }
    int fraction = digits - integerDigits;
    if (fraction < 1 || fraction > 3) {
      throw fail("1 to 3 digits after a Decimal's point");
    }
    return new BigDecimal(text);
  }

  private String string() {
    expect('"');
    StringBuilder sb = new StringBuilder();
    while (i < s.length()) {
      char c = s.charAt(i++);
      if (c == '\\') {
        if (i >= s.length()) {
          throw fail("a character after '\\'");
        }
        char next = s.charAt(i++);
        if (next != '"' && next != '\\') {
          throw fail("only \\\" and \\\\ as escapes in a String");
        }
        sb.append(next);
      } else if (c == '"') {
        return sb.toString();
      } else if (c < 0x20 || c > 0x7e) {
        i--;
        throw fail("printable ASCII in a String, not U+" + String.format("%04X", (int) c));
      } else {
        sb.append(c);
      }
    }
    throw fail("the end of a String");
  }

  private Token token() {
    int start = i++;
    while (i < s.length() && (isTchar(peek()) || peek() == ':' || peek() == '/')) {
      i++;
    }
    return new Token(s.substring(start, i));
  }

  private ByteSequence byteSequence() {
    expect(':');
    int start = i;
    while (i < s.length() && peek() != ':') {
      char c = peek();
      if (!(isAlpha(c) || isDigit(c) || c == '+' || c == '/' || c == '=')) {
        throw fail("base64 in a Byte Sequence");
      }
      i++;
    }
    expect(':');
    try {
      return new ByteSequence(Base64.getDecoder().decode(s.substring(start, i - 1)));
    } catch (IllegalArgumentException e) {
      throw fail("valid base64 in a Byte Sequence");
    }
  }

  private DisplayString displayString() {
    expect('%');
    expect('"');
    ByteBuffer bytes = ByteBuffer.allocate(s.length());
    while (i < s.length()) {
      char c = s.charAt(i++);
      if (c < 0x20 || c > 0x7e) {
        i--;
        throw fail("printable ASCII in a Display String");
      }
      if (c == '%') {
        if (i + 2 > s.length() || !isLowerHex(s.charAt(i)) || !isLowerHex(s.charAt(i + 1))) {
          throw fail("two lowercase hex digits after '%'");
        }
        bytes.put((byte) Integer.parseInt(s.substring(i, i + 2), 16));
        i += 2;
      } else if (c == '"') {
        bytes.flip();
        try {
          return new DisplayString(StandardCharsets.UTF_8.newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(bytes).toString());
        } catch (CharacterCodingException e) {
          throw fail("UTF-8 in a Display String");
        }
      } else {
        bytes.put((byte) c);
      }
    }
    throw fail("the end of a Display String");
  }

  private String key() {
    int start = i;
    if (i >= s.length() || !(isLcAlpha(peek()) || peek() == '*')) {
      throw fail("a key (lowercase letter or '*')");
    }
    while (i < s.length() && (isLcAlpha(peek()) || isDigit(peek()) || "_-.*".indexOf(peek()) >= 0)) {
      i++;
    }
    return s.substring(start, i);
  }

  private char peek() {
    return s.charAt(i);
  }

  private void expect(char c) {
    if (i >= s.length() || s.charAt(i) != c) {
      throw fail("'" + c + "'");
    }
    i++;
  }

  private void skipSp() {
    while (i < s.length() && s.charAt(i) == ' ') {
      i++;
    }
  }

  private void skipOws() {
    while (i < s.length() && (s.charAt(i) == ' ' || s.charAt(i) == '\t')) {
      i++;
    }
  }

  private IllegalArgumentException fail(String expected) {
    return new IllegalArgumentException("not a structured-field List: expected " + expected + " at " + i + " in ["
        + s + "]");
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  private static boolean isAlpha(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  }

  private static boolean isLcAlpha(char c) {
    return c >= 'a' && c <= 'z';
  }

  private static boolean isLowerHex(char c) {
    return isDigit(c) || (c >= 'a' && c <= 'f');
  }

  /** RFC 9110's tchar. */
  private static boolean isTchar(char c) {
    return isAlpha(c) || isDigit(c) || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
  }
}

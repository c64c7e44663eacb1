package dev.ratelimit.servlet;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small RFC 8941 parser for tests: a List of Items whose bare item is a String, Token, Integer
 * or Boolean, each with Parameters. Strict enough to fail on what a real parser would refuse.
 */
final class StructuredFields {
  /** One list member: its value and its parameters in order. */
  record Item(Object value, Map<String, Object> params) {
    long integer(String param) {
      Object v = params.get(param);
      if (!(v instanceof Long l)) {
        throw new AssertionError("parameter " + param + " is not an integer: " + v + " in " + this);
      }
      return l;
    }
  }

  private final String s;
  private int i;

  private StructuredFields(String s) {
    this.s = s;
  }

  static List<Item> parseList(String field) {
    if (field == null) {
      throw new AssertionError("no field");
    }
    StructuredFields p = new StructuredFields(field);
    List<Item> items = new ArrayList<>();
    p.skipSp();
    while (p.i < p.s.length()) {
      items.add(p.item());
      p.skipOws();
      if (p.i >= p.s.length()) {
        break;
      }
      p.expect(',');
      p.skipOws();
      if (p.i >= p.s.length()) {
        throw new AssertionError("trailing comma in " + field);
      }
    }
    return items;
  }

  private Item item() {
    Object value = bareItem();
    Map<String, Object> params = new LinkedHashMap<>();
    while (i < s.length() && s.charAt(i) == ';') {
      i++;
      skipSp();
      String key = key();
      Object v = Boolean.TRUE;
      if (i < s.length() && s.charAt(i) == '=') {
        i++;
        v = bareItem();
      }
      params.put(key, v);
    }
    return new Item(value, params);
  }

  private Object bareItem() {
    if (i >= s.length()) {
      throw new AssertionError("item expected at end of " + s);
    }
    char c = s.charAt(i);
    if (c == '"') {
      return string();
    }
    if (c == '-' || Character.isDigit(c)) {
      int start = i++;
      while (i < s.length() && Character.isDigit(s.charAt(i))) {
        i++;
      }
      if (i - start > 16) {
        throw new AssertionError("integer too long in " + s);
      }
      return Long.parseLong(s.substring(start, i));
    }
    if (c == '?') {
      i++;
      char b = s.charAt(i++);
      if (b != '0' && b != '1') {
        throw new AssertionError("bad boolean in " + s);
      }
      return b == '1';
    }
    if (Character.isLetter(c) || c == '*') {
      int start = i++;
      while (i < s.length() && "!#$%&'*+-.^_`|~:/".indexOf(s.charAt(i)) >= 0 || i < s.length()
          && Character.isLetterOrDigit(s.charAt(i))) {
        i++;
      }
      return new Token(s.substring(start, i));
    }
    throw new AssertionError("unexpected '" + c + "' at " + i + " in " + s);
  }

  /** A token bare item, told apart from a string. */
  record Token(String value) {}

  private String string() {
    expect('"');
    StringBuilder sb = new StringBuilder();
    while (true) {
      if (i >= s.length()) {
        throw new AssertionError("unterminated string in " + s);
      }
      char c = s.charAt(i++);
      if (c == '\\') {
        char next = s.charAt(i++);
        if (next != '"' && next != '\\') {
          throw new AssertionError("bad escape in " + s);
        }
        sb.append(next);
      } else if (c == '"') {
        return sb.toString();
      } else if (c < 0x20 || c > 0x7e) {
        throw new AssertionError("character " + (int) c + " not allowed in an sf-string: " + s);
      } else {
        sb.append(c);
      }
    }
  }

  private String key() {
    int start = i;
    if (i >= s.length() || !(Character.isLowerCase(s.charAt(i)) || s.charAt(i) == '*')) {
      throw new AssertionError("key expected at " + i + " in " + s);
    }
    while (i < s.length() && (Character.isLowerCase(s.charAt(i)) || Character.isDigit(s.charAt(i))
        || "_-.*".indexOf(s.charAt(i)) >= 0)) {
      i++;
    }
    return s.substring(start, i);
  }

  private void expect(char c) {
    if (i >= s.length() || s.charAt(i) != c) {
      throw new AssertionError("'" + c + "' expected at " + i + " in " + s);
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
}

package dev.ratelimit.servlet;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A small strict JSON parser for tests: objects, arrays, strings with escapes, numbers, literals. */
final class Json {
  private final String s;
  private int i;

  private Json(String s) {
    this.s = s;
  }

  static Object parse(String text) {
    Json p = new Json(text);
    p.ws();
    Object value = p.value();
    p.ws();
    if (p.i != text.length()) {
      throw new AssertionError("trailing text at " + p.i + " in " + text);
    }
    return value;
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> object(String text) {
    Object o = parse(text);
    if (!(o instanceof Map)) {
      throw new AssertionError("not an object: " + text);
    }
    return (Map<String, Object>) o;
  }

  private Object value() {
    char c = s.charAt(i);
    switch (c) {
      case '{': {
        i++;
        Map<String, Object> map = new LinkedHashMap<>();
        ws();
        if (s.charAt(i) == '}') {
          i++;
          return map;
        }
        while (true) {
          ws();
          String key = string();
          ws();
          expect(':');
          ws();
          if (map.put(key, value()) != null) {
            throw new AssertionError("duplicate key " + key);
          }
          ws();
          if (s.charAt(i) == ',') {
            i++;
            continue;
          }
          expect('}');
          return map;
        }
      }
      case '[': {
        i++;
        List<Object> list = new ArrayList<>();
        ws();
        if (s.charAt(i) == ']') {
          i++;
          return list;
        }
        while (true) {
          ws();
          list.add(value());
          ws();
          if (s.charAt(i) == ',') {
            i++;
            continue;
          }
          expect(']');
          return list;
        }
      }
      case '"':
        return string();
      default:
        if (s.startsWith("true", i)) {
          i += 4;
          return true;
        }
        if (s.startsWith("false", i)) {
          i += 5;
          return false;
        }
        if (s.startsWith("null", i)) {
          i += 4;
          return null;
        }
        int start = i;
        while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
          i++;
        }
        String n = s.substring(start, i);
        if (n.isEmpty()) {
          throw new AssertionError("unexpected '" + c + "' at " + i + " in " + s);
        }
        return n.contains(".") || n.contains("e") || n.contains("E") ? (Object) Double.parseDouble(n) : (Object) Long.parseLong(n);
    }
  }

  private String string() {
    expect('"');
    StringBuilder sb = new StringBuilder();
    while (true) {
      char c = s.charAt(i++);
      if (c == '"') {
        return sb.toString();
      }
      if (c < 0x20) {
        throw new AssertionError("unescaped control character in a JSON string: " + s);
      }
      if (c != '\\') {
        sb.append(c);
        continue;
      }
      char e = s.charAt(i++);
      switch (e) {
        case '"', '\\', '/' -> sb.append(e);
        case 'b' -> sb.append('\b');
        case 'f' -> sb.append('\f');
        case 'n' -> sb.append('\n');
        case 'r' -> sb.append('\r');
        case 't' -> sb.append('\t');
        case 'u' -> {
          sb.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
          i += 4;
        }
        default -> throw new AssertionError("bad escape \\" + e + " in " + s);
      }
    }
  }

  private void expect(char c) {
    if (s.charAt(i) != c) {
      throw new AssertionError("'" + c + "' expected at " + i + " in " + s);
    }
    i++;
  }

  private void ws() {
    while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) {
      i++;
    }
  }
}

package dev.ratelimit.http;

import dev.ratelimit.Decision;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.internal.http.LimitHeaders;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What a denied request is answered with: status, content type, body and extra headers. The
 * default, {@link #PROBLEM_JSON}, is a {@code 429} with an RFC 9457 {@code application/problem+json}
 * body; for clients that cannot take it, a filter rule, the whole filter or the starter can answer
 * otherwise:
 *
 * <pre>{@code
 * DeniedResponse plain = DeniedResponse.builder()
 *     .status(503)
 *     .contentType("application/json")
 *     .body("{\"error\":\"rate_limited\",\"policy\":\"{{policy}}\",\"retry_in\":{{retry-after}}}")
 *     .header("X-Error-Code", "RL-1")
 *     .build();
 * }</pre>
 *
 * <p>Whatever the body, the response carries {@code Retry-After}, {@code Cache-Control: no-store}
 * (an extra {@code Cache-Control} header replaces it) and the limit headers, as both
 * filters write them. The body template's placeholders are {@code {{status}}},
 * {@code {{policy}}}, {@code {{policies}}}, {@code {{retry-after}}} and {@code {{limit}}}: the status; the limiting policy's name (the denying one with the longest wait); the denying
 * policies' names, comma-separated; {@code Retry-After}'s seconds; the limiting policy's limit.
 * Each value is escaped for the content type: as a JSON string's content for {@code application/json}
 * and {@code +json} types (write {@code "{{policy}}"} in quotes), as HTML/XML text for {@code text/html},
 * {@code xml} and {@code +xml} types, as it is for anything else. Without a body, the problem body
 * is sent, in the content type given ({@code application/json} for clients that refuse
 * {@code application/problem+json}), with its {@code status} member the configured status.
 *
 * <p>Immutable; every builder method validates its value, so a configuration error is found when
 * the application starts.
 */
public final class DeniedResponse {
  /** The placeholders of a body template, as the documentation lists them. */
  static final String PLACEHOLDER_LIST = "{{status}}, {{policy}}, {{policies}}, {{retry-after}}, {{limit}}";
  private static final Set<String> PLACEHOLDERS = Set.of("status", "policy", "policies", "retry-after", "limit");
  /** The headers the limiter writes itself, which an extra header must not replace. */
  private static final Set<String> WRITTEN = Set.of("content-type", "content-length", "transfer-encoding",
      "retry-after", "ratelimit", "ratelimit-policy", "x-ratelimit-limit", "x-ratelimit-remaining",
      "x-ratelimit-reset");
  private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");
  private static final Pattern MEDIA_TYPE = Pattern.compile(
      "[!#$%&'*+.^_`|~0-9A-Za-z-]+/[!#$%&'*+.^_`|~0-9A-Za-z-]+"
          + "(\\s*;\\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+=([!#$%&'*+.^_`|~0-9A-Za-z-]+|\"[^\"\\\\\\p{Cntrl}]*\"))*");

  /** The default: {@code 429} and an RFC 9457 {@code application/problem+json} body. */
  public static final DeniedResponse PROBLEM_JSON = builder().build();

  private final int status;
  private final String contentType;
  private final String body;
  private final List<Object> template; // literal Strings and Placeholders; null for the problem body
  private final Map<String, String> headers;

  private DeniedResponse(Builder b) {
    this.status = b.status;
    this.contentType = b.contentType;
    this.body = b.body;
    this.template = b.body == null ? null : parse(b.body);
    this.headers = Collections.unmodifiableMap(new LinkedHashMap<>(b.headers));
  }

  /** A builder of the default response, {@link #PROBLEM_JSON}. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding what {@code base} holds, to change some of it (a rule's response over the filter's). */
  public static Builder builder(DeniedResponse base) {
    Builder b = new Builder();
    b.status = base.status;
    b.contentType = base.contentType;
    b.body = base.body;
    b.headers.putAll(base.headers);
    return b;
  }

  /** The status, 4xx or 5xx; 429 by default. */
  public int status() {
    return status;
  }

  /** The content type; null for the default, {@code application/problem+json} (or none with an empty body). */
  public String contentType() {
    return contentType;
  }

  /** The body template; null for the problem body. */
  public String body() {
    return body;
  }

  /** The extra headers, in order. */
  public Map<String, String> headers() {
    return headers;
  }

  /**
   * What this response sends for {@code decisions} (every decision it describes), for a front
   * door that writes the response itself, such as the reactive filter: the content type (null for
   * none, an empty body without one) and the body, the problem body or the template's, rendered.
   */
  public Rendered rendered(List<Decision> decisions) {
    Objects.requireNonNull(decisions, "decisions");
    if (template == null) {
      return new Rendered(contentType == null ? LimitHeaders.PROBLEM_JSON : withCharset(contentType),
          LimitHeaders.problemJson(decisions, null, status));
    }
    if (body.isEmpty()) {
      return new Rendered(contentType, "");
    }
    return new Rendered(withCharset(contentType), render(decisions));
  }

  /**
   * A rendered body and its content type.
   *
   * @param contentType the content type, null for none
   * @param body the body, written as UTF-8
   */
  public record Rendered(String contentType, String body) {}

  /** The body of the template for {@code decisions}, each value escaped for the content type. */
  String render(List<Decision> decisions) {
    Escape escape = Escape.of(contentType);
    Decision limiting = new MultiDecision(decisions.stream().allMatch(Decision::allowed), decisions).limiting();
    StringBuilder out = new StringBuilder(body.length() + 64);
    for (Object part : template) {
      if (part instanceof Placeholder p) {
        String value = switch (p.name()) {
          case "status" -> Integer.toString(status);
          case "policy" -> limiting.policy().name();
          case "policies" -> String.join(", ", LimitHeaders.violatedPolicies(decisions));
          case "retry-after" -> Long.toString(LimitHeaders.ceilSeconds(LimitHeaders.retryAfterMicros(decisions)));
          case "limit" -> Long.toString(limiting.limit());
          default -> throw new IllegalStateException(p.name()); // parse() admits no other
        };
        out.append(escape.apply(value));
      } else {
        out.append((String) part);
      }
    }
    return out.toString();
  }

  @Override
  public String toString() {
    return "DeniedResponse[" + status + (contentType == null ? "" : ", " + contentType)
        + (body == null ? ", problem body" : "") + (headers.isEmpty() ? "" : ", " + headers.keySet()) + "]";
  }

  private record Placeholder(String name) {}

  /** A template's literal text and placeholders; refuses an unknown placeholder. */
  private static List<Object> parse(String template) {
    List<Object> parts = new ArrayList<>();
    int at = 0;
    while (true) {
      int open = template.indexOf("{{", at);
      if (open < 0) {
        if (at < template.length()) {
          parts.add(template.substring(at));
        }
        return List.copyOf(parts);
      }
      int close = template.indexOf("}}", open + 2);
      String name = close < 0 ? template.substring(open + 2, Math.min(template.length(), open + 22))
          : template.substring(open + 2, close);
      if (close < 0 || !PLACEHOLDERS.contains(name)) {
        throw new IllegalArgumentException("unknown placeholder '{{" + name + (close < 0 ? "" : "}}")
            + "' in the body; the placeholders are " + PLACEHOLDER_LIST);
      }
      if (open > at) {
        parts.add(template.substring(at, open));
      }
      parts.add(new Placeholder(name));
      at = close + 2;
    }
  }

  /** A text content type without a charset gets UTF-8's: the body is written as UTF-8. */
  private static String withCharset(String contentType) {
    String lower = contentType.toLowerCase(Locale.ROOT);
    return lower.startsWith("text/") && !lower.contains("charset=") ? contentType + ";charset=UTF-8" : contentType;
  }

  /** How a placeholder's value is escaped in a body of a content type. */
  private enum Escape {
    JSON, MARKUP, NONE;

    static Escape of(String contentType) {
      String type = contentType.toLowerCase(Locale.ROOT);
      int semicolon = type.indexOf(';');
      type = (semicolon < 0 ? type : type.substring(0, semicolon)).strip();
      if (type.endsWith("/json") || type.endsWith("+json")) {
        return JSON;
      }
      if (type.equals("text/html") || type.endsWith("/xml") || type.endsWith("+xml")) {
        return MARKUP;
      }
      return NONE;
    }

    String apply(String value) {
      return switch (this) {
        case JSON -> {
          String quoted = LimitHeaders.jsonString(value);
          yield quoted.substring(1, quoted.length() - 1);
        }
        case MARKUP -> value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("\"", "&quot;").replace("'", "&#39;");
        case NONE -> value;
      };
    }
  }

  /** Builds a {@link DeniedResponse}; each method refuses a bad value at once. Not thread-safe. */
  public static final class Builder {
    private int status = LimitHeaders.TOO_MANY_REQUESTS;
    private String contentType;
    private String body;
    private final Map<String, String> headers = new LinkedHashMap<>();

    private Builder() {}

    /**
     * The status; default 429.
     *
     * @throws IllegalArgumentException when it is not a 4xx or 5xx status
     */
    public Builder status(int status) {
      if (status < 400 || status > 599) {
        throw new IllegalArgumentException("status " + status + " is not a 4xx or 5xx status: a denied request must"
            + " not look served or redirected; use 429 (the default), or 503 for clients that expect it");
      }
      this.status = status;
      return this;
    }

    /**
     * The content type, such as {@code application/json} or {@code text/plain}; it decides how the
     * body's placeholders are escaped. Default {@code application/problem+json} for the problem body.
     *
     * @throws IllegalArgumentException when it is not a media type
     */
    public Builder contentType(String contentType) {
      String trimmed = contentType == null ? null : contentType.strip();
      if (trimmed == null || !MEDIA_TYPE.matcher(trimmed).matches()) {
        throw new IllegalArgumentException("content type '" + contentType + "' is not a media type such as"
            + " application/json or text/plain;charset=UTF-8");
      }
      this.contentType = trimmed;
      return this;
    }

    /**
     * The body template, UTF-8 on the wire; {@code ""} for none. It needs a {@link #contentType}
     * unless empty.
     *
     * @throws IllegalArgumentException naming an unknown placeholder
     */
    public Builder body(String template) {
      Objects.requireNonNull(template, "body");
      parse(template);
      this.body = template;
      return this;
    }

    /**
     * Adds a header with a fixed value (no placeholders), replacing one of the same name.
     *
     * @throws IllegalArgumentException when the name is not a header name or is one the limiter
     *     writes ({@code Retry-After}, the limit headers, {@code Content-Type}, {@code Content-Length}),
     *     or the value holds a character outside printable ASCII
     */
    public Builder header(String name, String value) {
      if (name == null || !TOKEN.matcher(name).matches()) {
        throw new IllegalArgumentException("'" + name + "' is not a header name");
      }
      if (WRITTEN.contains(name.toLowerCase(Locale.ROOT))) {
        throw new IllegalArgumentException("header '" + name + "' is written by the limiter itself (Retry-After, "
            + "RateLimit, RateLimit-Policy, X-RateLimit-*, Content-Length; Content-Type is the content type)");
      }
      if (value == null || !value.chars().allMatch(c -> c == '\t' || (c >= 0x20 && c <= 0x7e))) {
        throw new IllegalArgumentException("header '" + name + "': value '" + value + "' must be printable ASCII");
      }
      headers.keySet().removeIf(n -> n.equalsIgnoreCase(name));
      headers.put(name, value.strip());
      return this;
    }

    /**
     * The response.
     *
     * @throws IllegalArgumentException when a body that is not empty has no content type to
     *     escape its placeholders for
     */
    public DeniedResponse build() {
      if (body != null && !body.isEmpty() && contentType == null) {
        throw new IllegalArgumentException("a body needs a content type, for which its placeholders are escaped:"
            + " application/json, text/plain, text/html ...");
      }
      return new DeniedResponse(this);
    }
  }
}

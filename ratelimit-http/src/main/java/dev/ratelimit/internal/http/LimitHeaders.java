package dev.ratelimit.internal.http;

import dev.ratelimit.Decision;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.http.PolicyNames;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The values of the limit headers and the problem body of decisions, for every front door (the
 * servlet filter's {@code RateLimitResponses}, the reactive filter, the gateway's limiter): one
 * implementation of draft-ietf-httpapi-ratelimit-headers-11 and RFC 9457 here, each door setting
 * them on its own kind of response. See {@code dev.ratelimit.servlet.RateLimitResponses} for the
 * rules.
 */
public final class LimitHeaders {
  /** The problem type of draft-ietf-httpapi-ratelimit-headers for a quota that is exhausted. */
  public static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";
  public static final String QUOTA_EXCEEDED_TITLE = "Request cannot be satisfied as assigned quota has been exceeded";
  public static final String PROBLEM_JSON = "application/problem+json";
  public static final int TOO_MANY_REQUESTS = 429;
  /** Every limit header field, but {@code Retry-After}. */
  public static final List<String> LIMIT_FIELDS = List.of("RateLimit-Policy", "RateLimit", "X-RateLimit-Limit",
      "X-RateLimit-Remaining", "X-RateLimit-Reset");

  private LimitHeaders() {}

  /**
   * The limit header fields of {@code decisions}, in order, as {@code draft} and {@code legacy} ask:
   * empty when the list is empty or any decision is degraded; every {@code t} at most {@code
   * maxWindowSeconds} ({@link Long#MAX_VALUE} for no bound).
   */
  public static Map<String, String> fields(List<Decision> decisions, boolean draft, boolean legacy,
      long maxWindowSeconds) {
    Map<String, String> fields = new LinkedHashMap<>();
    if (!hasLimitHeaders(decisions)) {
      return fields;
    }
    if (draft) {
      String policy = policyHeader(decisions);
      if (policy != null) { // none to list: no field
        fields.put("RateLimit-Policy", policy);
        fields.put("RateLimit", limitHeader(decisions, maxWindowSeconds));
      }
    }
    if (legacy) {
      Decision limiting = mostLimiting(decisions);
      fields.put("X-RateLimit-Limit", Long.toString(limiting.limit()));
      fields.put("X-RateLimit-Remaining", Long.toString(Math.max(0, limiting.remaining())));
      fields.put("X-RateLimit-Reset", Long.toString(ceilSeconds(limiting.resetAfterMicros())));
    }
    return fields;
  }

  /**
   * The header fields of a denial: the limit fields (no {@code t} beyond {@code Retry-After}),
   * {@code Retry-After} (the longest wait of the denying decisions, whole seconds rounded up) and
   * {@code Cache-Control: no-store}.
   */
  public static Map<String, String> deniedFields(List<Decision> decisions, boolean draft, boolean legacy) {
    long retry = ceilSeconds(retryAfterMicros(decisions));
    Map<String, String> fields = fields(decisions, draft, legacy, retry);
    fields.put("Retry-After", Long.toString(retry));
    fields.put("Cache-Control", "no-store");
    return fields;
  }

  /**
   * {@code earlier} followed by {@code added}, one decision per policy name: where both hold a
   * name, the more restrictive decision keeps the earlier one's place (degraded first, then
   * denied, then the least remaining, then the longest effective window).
   */
  public static List<Decision> merge(List<Decision> earlier, List<Decision> added) {
    List<Decision> all = new ArrayList<>(earlier.size() + added.size());
    all.addAll(earlier);
    for (Decision d : added) {
      int at = indexOfName(all, d.policy().name());
      if (at < 0) {
        all.add(d);
      } else if (moreRestrictive(d, all.get(at))) {
        all.set(at, d);
      }
    }
    return List.copyOf(all);
  }

  private static int indexOfName(List<Decision> decisions, String name) {
    for (int i = 0; i < decisions.size(); i++) {
      if (decisions.get(i).policy().name().equals(name)) {
        return i;
      }
    }
    return -1;
  }

  private static boolean moreRestrictive(Decision a, Decision b) {
    if (a.isDegraded() != b.isDegraded()) {
      return a.isDegraded();
    }
    if (a.allowed() != b.allowed()) {
      return !a.allowed();
    }
    if (a.remaining() != b.remaining()) {
      return a.remaining() < b.remaining();
    }
    return effectiveWindowMicros(a) > effectiveWindowMicros(b);
  }

  /** The draft's effective window of one decision: its own wait when denying, else until fresh. */
  private static long effectiveWindowMicros(Decision d) {
    return d.allowed() ? d.resetAfterMicros() : d.retryAfterMicros();
  }

  /**
   * The problem body of {@code RateLimitResponses#problemJson(List, String)}
   * with another {@code status} member, that of a configured response.
   */
  public static String problemJson(List<Decision> decisions, String instance, int status) {
    Objects.requireNonNull(decisions, "decisions");
    List<String> violated = violatedPolicies(decisions);
    long retry = ceilSeconds(retryAfterMicros(decisions));
    // one builder, sized for the usual body, and the constant part escaped once: written per denial
    StringBuilder json = new StringBuilder(PROBLEM_START.length() + 160).append(PROBLEM_START).append(status)
        .append(",\"detail\":\"Quota exceeded for ").append(violated.size() == 1 ? "policy " : "policies ");
    for (int i = 0; i < violated.size(); i++) {
      appendJsonContent(json.append(i == 0 ? "'" : ", '"), violated.get(i)).append('\'');
    }
    json.append("; retry after ").append(retry).append(retry == 1 ? " second.\"" : " seconds.\"");
    if (instance != null) {
      appendJsonContent(json.append(",\"instance\":\""), instance).append('"');
    }
    json.append(",\"violated-policies\":[");
    for (int i = 0; i < violated.size(); i++) {
      appendJsonContent(json.append(i == 0 ? "\"" : ",\""), violated.get(i)).append('"');
    }
    return json.append("]}").toString();
  }

  private static final String PROBLEM_START = "{\"type\":" + jsonString(QUOTA_EXCEEDED)
      + ",\"title\":" + jsonString(QUOTA_EXCEEDED_TITLE) + ",\"status\":";

  // ---------------------------------------------------------------------------------------------

  /** Whether limit headers may describe these decisions: some, none degraded. */
  public static boolean hasLimitHeaders(List<Decision> decisions) {
    if (decisions == null || decisions.isEmpty()) {
      return false;
    }
    for (Decision d : decisions) {
      if (d.isDegraded()) {
        return false;
      }
    }
    return true;
  }

  /**
   * {@code "a";q=100;w=60, "b";q=10;w=1}; null when no decision's policy name {@link
   * PolicyNames#fitsHeader fits} a structured-field string (the field must not be empty).
   */
  public static String policyHeader(List<Decision> decisions) {
    StringBuilder sb = new StringBuilder();
    for (Decision d : decisions) {
      if (!PolicyNames.fitsHeader(d.policy().name())) {
        continue; // never written otherwise: configuration refuses such names
      }
      if (sb.length() > 0) {
        sb.append(", ");
      }
      sb.append(PolicyNames.sfString(d.policy().name()))
          .append(";q=").append(d.limit())
          .append(";w=").append(ceilSeconds(d.policy().window()));
    }
    return sb.length() == 0 ? null : sb.toString();
  }

  /**
   * {@code "a";r=0;t=17, "b";r=9;t=1}: {@code t} is a decision's resetAfter, or a denying one's
   * retryAfter (within it no more than r can be used; within its resetAfter, more could), and at
   * most {@code maxWindowSeconds} (a shorter window keeps "no more than r within t" true).
   */
  public static String limitHeader(List<Decision> decisions, long maxWindowSeconds) {
    StringBuilder sb = new StringBuilder();
    for (Decision d : decisions) {
      if (!PolicyNames.fitsHeader(d.policy().name())) {
        continue;
      }
      if (sb.length() > 0) {
        sb.append(", ");
      }
      sb.append(PolicyNames.sfString(d.policy().name()))
          .append(";r=").append(Math.max(0, d.remaining()))
          .append(";t=").append(Math.min(ceilSeconds(effectiveWindowMicros(d)), maxWindowSeconds));
    }
    return sb.length() == 0 ? null : sb.toString();
  }

  /** A JSON string literal: quotes, backslashes, control characters and lone surrogates escaped. */
  public static String jsonString(String s) {
    return appendJsonContent(new StringBuilder(s.length() + 2).append('"'), s).append('"').toString();
  }

  /** Appends {@code s} escaped for the inside of a JSON string, without the quotes. */
  private static StringBuilder appendJsonContent(StringBuilder sb, String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        case '\b' -> sb.append("\\b");
        case '\f' -> sb.append("\\f");
        default -> {
          boolean loneSurrogate = Character.isSurrogate(c) && !(Character.isHighSurrogate(c)
              && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1)));
          if (Character.isHighSurrogate(c) && !loneSurrogate) {
            sb.append(c).append(s.charAt(++i));
          } else if (c < 0x20 || c == 0x2028 || c == 0x2029 || c == 0x7f || loneSurrogate) {
            sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    return sb;
  }

  /** Whole seconds, rounded up: 1.001 s is 2, 0 is 0. */
  public static long ceilSeconds(Duration d) {
    if (d.isNegative() || d.isZero()) {
      return 0;
    }
    return d.getNano() == 0 ? d.getSeconds() : d.getSeconds() + 1;
  }

  /** Whole seconds of {@code micros}, rounded up: 1,000,001 µs is 2, 0 is 0. */
  public static long ceilSeconds(long micros) {
    return micros <= 0 ? 0 : (micros - 1) / 1_000_000 + 1;
  }

  /** The longest retryAfter of the denying decisions (of all when none denied), µs. */
  public static long retryAfterMicros(List<Decision> decisions) {
    boolean anyDenied = false;
    for (Decision d : decisions) {
      anyDenied |= !d.allowed();
    }
    long longest = 0;
    for (Decision d : decisions) {
      if (!anyDenied || !d.allowed()) {
        longest = Math.max(longest, d.retryAfterMicros());
      }
    }
    return longest;
  }

  public static Decision mostLimiting(List<Decision> decisions) {
    boolean allowed = decisions.stream().allMatch(Decision::allowed);
    return new MultiDecision(allowed, decisions).limiting();
  }

  /** The names of the denying policies (of all of them when none denied), in order. */
  public static List<String> violatedPolicies(List<Decision> decisions) {
    List<String> names = new ArrayList<>();
    boolean anyDenied = false;
    for (Decision d : decisions) {
      anyDenied |= !d.allowed();
    }
    for (Decision d : decisions) {
      if (!anyDenied || !d.allowed()) {
        names.add(d.policy().name());
      }
    }
    return names;
  }
}

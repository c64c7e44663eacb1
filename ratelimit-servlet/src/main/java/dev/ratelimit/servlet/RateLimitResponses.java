package dev.ratelimit.servlet;

import dev.ratelimit.Decision;
import dev.ratelimit.MultiDecision;
import dev.ratelimit.http.DeniedResponse;
import dev.ratelimit.http.HeaderOptions;
import dev.ratelimit.http.PolicyNames;
import dev.ratelimit.internal.http.LimitHeaders;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The HTTP side of decisions: limit headers, the 429 response and its problem body. Used by
 * {@link RateLimitFilter} and reusable by anything else that answers from {@link Decision}s.
 *
 * <ul>
 *   <li>{@code RateLimit-Policy: "api";q=100;w=60} and {@code RateLimit: "api";r=0;t=17}, per
 *       draft-ietf-httpapi-ratelimit-headers-11: structured-field lists (RFC 9651), one item per
 *       decision, the item a String naming the policy ({@link PolicyNames}: printable ASCII,
 *       {@code "} and {@code \} escaped; a decision whose policy name is not is left out of both
 *       fields, and configuration refuses such names); {@code q} the limit, {@code w} the window,
 *       {@code r} what remains, {@code t} the draft's effective window, within which no more than
 *       {@code r} can be used: the seconds until the key's state is fresh again ({@code resetAfter}),
 *       but for a denying decision its own wait ({@code retryAfter}), and on a denied response never
 *       more than its {@code Retry-After}, which the draft says should not precede the end of an
 *       effective window. Seconds are whole and rounded up. No {@code pk}: a partition key here
 *       would be the limiter key, often personal data (an address, a user id), which the draft asks
 *       servers not to expose; no {@code qu}: the unit is the draft's default, requests (or what a
 *       rule's cost charges).</li>
 *   <li>Legacy, optional: {@code X-RateLimit-Limit}, {@code X-RateLimit-Remaining} and
 *       {@code X-RateLimit-Reset} (seconds until reset, rounded up) of the most limiting decision
 *       (as {@link MultiDecision#limiting()}: a denying one with the longest wait, else the one
 *       with the least remaining).</li>
 *   <li>One request, several writers: a filter rule and a {@code @RateLimited} method may both
 *       check a request. The methods that take the request record the decisions on it and write
 *       the headers of all of them, so the last writer's fields describe every policy that checked
 *       the request: one item per policy name (of two decisions of one name, the more restrictive),
 *       the legacy fields and {@code Retry-After} of the most limiting of them all.</li>
 *   <li>No limit header at all when any decision {@link Decision#isDegraded() is degraded}.</li>
 *   <li>Denied: {@code 429}, {@code Retry-After} in whole seconds rounded up (never earlier than
 *       the real wait: 1.001 s gives 2), {@code Cache-Control: no-store}, and an RFC 9457 body of
 *       type {@code https://iana.org/assignments/http-problem-types#quota-exceeded} with a
 *       {@code violated-policies} member; or status, body and extra headers as a {@link
 *       DeniedResponse} configures them.</li>
 * </ul>
 */
public final class RateLimitResponses {
  /** The problem type of draft-ietf-httpapi-ratelimit-headers for a quota that is exhausted. */
  static final String QUOTA_EXCEEDED = LimitHeaders.QUOTA_EXCEEDED;
  static final String QUOTA_EXCEEDED_TITLE = LimitHeaders.QUOTA_EXCEEDED_TITLE;
  static final String PROBLEM_JSON = LimitHeaders.PROBLEM_JSON;
  static final int TOO_MANY_REQUESTS = LimitHeaders.TOO_MANY_REQUESTS;
  /** The request attribute holding the decisions whose limit headers were written for it. */
  static final String DECISIONS = RateLimitResponses.class.getName() + ".decisions";
  /** Every limit header field this class writes, but {@code Retry-After}. */
  private static final List<String> LIMIT_FIELDS = LimitHeaders.LIMIT_FIELDS;

  private RateLimitResponses() {}

  /**
   * Sets the limit headers that {@code options} asks for, describing {@code decisions} alone; sets
   * nothing when the list is empty or any decision is degraded. Replaces earlier values: where
   * several checks answer one request, use {@link #writeHeaders(HttpServletRequest,
   * HttpServletResponse, List, HeaderOptions)}.
   */
  public static void writeHeaders(HttpServletResponse response, List<Decision> decisions, HeaderOptions options) {
    writeHeaders(response, decisions, options, Long.MAX_VALUE);
  }

  /**
   * Sets the limit headers of {@code decisions} together with those of every decision written for
   * {@code request} before (by the filter, a {@code @RateLimited} method...), and records them on
   * the request for the next writer: each field lists every policy that checked the request, once.
   * When any of them is degraded, no limit header is left on the response.
   *
   * @param request the request the response answers; null writes {@code decisions} alone
   */
  public static void writeHeaders(HttpServletRequest request, HttpServletResponse response, List<Decision> decisions,
      HeaderOptions options) {
    writeHeaders(response, record(request, response, decisions), options, Long.MAX_VALUE);
  }

  /**
   * The limit headers of a denied response ({@link #writeHeaders} with no {@code t} beyond the
   * response's {@code Retry-After}), with those written for the request before, for the filter to
   * set before its {@link DeniedHandler} runs.
   */
  static void writeHeadersOfDenial(HttpServletRequest request, HttpServletResponse response, List<Decision> decisions,
      HeaderOptions options) {
    List<Decision> all = record(request, response, decisions);
    writeHeaders(response, all, options, ceilSeconds(retryAfterMicros(all)));
  }

  /**
   * {@code decisions} merged into those recorded on {@code request} ({@link #merge}), recorded
   * there in turn; {@code decisions} alone when there is no request. When the merged decisions
   * may carry no limit header (one is degraded) but earlier ones were written, the fields are
   * removed from the response: they would describe only part of the policies.
   */
  static List<Decision> record(HttpServletRequest request, HttpServletResponse response, List<Decision> decisions) {
    Objects.requireNonNull(decisions, "decisions");
    if (request == null) {
      return decisions;
    }
    List<Decision> earlier = recorded(request);
    List<Decision> all = merge(earlier, decisions);
    request.setAttribute(DECISIONS, all);
    if (!earlier.isEmpty() && !hasLimitHeaders(all) && !response.isCommitted()) {
      for (String name : LIMIT_FIELDS) {
        response.setHeader(name, null); // Servlet: a null value removes the field
      }
    }
    return all;
  }

  /** The decisions whose headers were written for {@code request}, in order; empty when none. */
  @SuppressWarnings("unchecked")
  static List<Decision> recorded(HttpServletRequest request) {
    return request.getAttribute(DECISIONS) instanceof List<?> list ? (List<Decision>) list : List.of();
  }

  static List<Decision> merge(List<Decision> earlier, List<Decision> added) {
    return LimitHeaders.merge(earlier, added);
  }

  /** {@link #writeHeaders}, with every {@code t} at most {@code maxWindowSeconds}. */
  private static void writeHeaders(HttpServletResponse response, List<Decision> decisions, HeaderOptions options,
      long maxWindowSeconds) {
    Objects.requireNonNull(response, "response");
    Objects.requireNonNull(options, "options");
    if (!hasLimitHeaders(decisions)) {
      return;
    }
    Map<String, String> fields = LimitHeaders.fields(decisions, options.draft(), options.legacy(), maxWindowSeconds);
    if (options.draft() && !fields.containsKey("RateLimit-Policy")) {
      response.setHeader("RateLimit-Policy", null); // none to list: no field, also not an earlier writer's
      response.setHeader("RateLimit", null);
    }
    fields.forEach(response::setHeader);
  }

  /**
   * The header fields of an answer to a check, as this class writes them on a servlet response, for
   * callers that answer another way (the decision service's gRPC endpoint, which hands them to
   * Envoy): the limit headers {@code options} asks for, and when the answer is a denial, {@code
   * Retry-After} (the longest wait of the denying decisions, whole seconds rounded up) with no
   * {@code t} beyond it. Empty when {@code decisions} is empty; only {@code Retry-After} when any
   * decision is degraded (the limit numbers would be invented). In the order they are written.
   *
   * @param denied whether the answer refuses the request
   */
  public static Map<String, String> headerFields(List<Decision> decisions, HeaderOptions options, boolean denied) {
    Objects.requireNonNull(decisions, "decisions");
    Objects.requireNonNull(options, "options");
    Map<String, String> fields = new LinkedHashMap<>();
    if (decisions.isEmpty()) {
      return fields;
    }
    long retry = denied ? ceilSeconds(retryAfterMicros(decisions)) : Long.MAX_VALUE;
    fields.putAll(LimitHeaders.fields(decisions, options.draft(), options.legacy(), retry));
    if (denied) {
      fields.put("Retry-After", Long.toString(retry));
    }
    return fields;
  }

  /**
   * Writes the denied response: status 429, {@code Retry-After} (the longest wait of the denying
   * decisions, whole seconds rounded up), {@code Cache-Control: no-store}, the limit headers
   * (unless degraded) and the {@link #problemJson problem body}: {@link DeniedResponse#PROBLEM_JSON},
   * which a configured {@link DeniedResponse} replaces. Does nothing when the response is already
   * committed.
   */
  public static void writeDenied(HttpServletResponse response, List<Decision> decisions, HeaderOptions options)
      throws IOException {
    writeDenied(null, response, decisions, options);
  }

  /**
   * {@link #writeDenied(HttpServletResponse, List, HeaderOptions)}, describing {@code decisions}
   * together with every decision written for {@code request} before (see {@link
   * #writeHeaders(HttpServletRequest, HttpServletResponse, List, HeaderOptions)}): a request a
   * filter rule allowed and a {@code @RateLimited} method denied lists both policies, and its
   * {@code Retry-After} is the longest wait of the denying ones.
   *
   * @param request the request the response answers; null describes {@code decisions} alone
   */
  public static void writeDenied(HttpServletRequest request, HttpServletResponse response, List<Decision> decisions,
      HeaderOptions options) throws IOException {
    writeDenied(request, response, decisions, options, DeniedResponse.PROBLEM_JSON);
  }

  /**
   * Writes the denied response {@code configured} describes: the denial's headers for {@code
   * decisions} and every decision written for {@code request} before ({@link
   * #writeHeaders(HttpServletRequest, HttpServletResponse, List, HeaderOptions)}), {@code
   * Retry-After}, {@code Cache-Control: no-store}, the extra headers, the status and the body. Does
   * nothing when the response is already committed.
   *
   * @param request the request the response answers; null describes {@code decisions} alone
   */
  public static void writeDenied(HttpServletRequest request, HttpServletResponse response, List<Decision> decisions,
      HeaderOptions options, DeniedResponse configured) throws IOException {
    Objects.requireNonNull(response, "response");
    Objects.requireNonNull(configured, "configured");
    if (response.isCommitted()) {
      return;
    }
    List<Decision> all = record(request, response, decisions);
    writeDeniedHeaders(response, all, options);
    configured.headers().forEach(response::setHeader);
    response.setStatus(configured.status());
    DeniedResponse.Rendered rendered = configured.rendered(all);
    if (configured.body() != null && configured.body().isEmpty()) {
      response.resetBuffer();
      if (configured.contentType() != null) {
        response.setContentType(configured.contentType());
      }
      response.setContentLength(0);
    } else {
      writeBody(response, rendered.contentType(), rendered.body());
    }
  }

  /**
   * The headers of a denial, without status or body, for callers that write those themselves:
   * the limit headers (unless degraded; no {@code t} beyond {@code Retry-After}), {@code
   * Retry-After} (the longest wait of the denying decisions, whole seconds rounded up) and {@code
   * Cache-Control: no-store}.
   */
  public static void writeDeniedHeaders(HttpServletResponse response, List<Decision> decisions,
      HeaderOptions options) {
    Objects.requireNonNull(options, "options");
    LimitHeaders.deniedFields(decisions, options.draft(), options.legacy()).forEach(response::setHeader);
  }

  /**
   * The RFC 9457 body of a denial: {@code type}, {@code title}, {@code status} 429, {@code detail},
   * {@code instance} (only when not null) and {@code violated-policies}, the names of the denying
   * policies (of all of them when none denied).
   *
   * @param instance a URI reference identifying this occurrence, or null to leave it out
   */
  public static String problemJson(List<Decision> decisions, String instance) {
    return problemJson(decisions, instance, TOO_MANY_REQUESTS);
  }

  /** {@link #problemJson(List, String)} with another {@code status} member, that of a configured response. */
  static String problemJson(List<Decision> decisions, String instance, int status) {
    return LimitHeaders.problemJson(decisions, instance, status);
  }

  static boolean hasLimitHeaders(List<Decision> decisions) {
    return LimitHeaders.hasLimitHeaders(decisions);
  }

  static String policyHeader(List<Decision> decisions) {
    return LimitHeaders.policyHeader(decisions);
  }

  static String limitHeader(List<Decision> decisions, long maxWindowSeconds) {
    return LimitHeaders.limitHeader(decisions, maxWindowSeconds);
  }

  static String jsonString(String s) {
    return LimitHeaders.jsonString(s);
  }

  static long ceilSeconds(Duration d) {
    return LimitHeaders.ceilSeconds(d);
  }

  static long ceilSeconds(long micros) {
    return LimitHeaders.ceilSeconds(micros);
  }

  static long retryAfterMicros(List<Decision> decisions) {
    return LimitHeaders.retryAfterMicros(decisions);
  }

  static Decision mostLimiting(List<Decision> decisions) {
    return LimitHeaders.mostLimiting(decisions);
  }

  static List<String> violatedPolicies(List<Decision> decisions) {
    return LimitHeaders.violatedPolicies(decisions);
  }

  /** Writes {@code body} as UTF-8 with {@code contentType}, replacing anything buffered. */
  static void writeBody(HttpServletResponse response, String contentType, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    response.resetBuffer();
    response.setContentType(contentType);
    response.setContentLength(bytes.length);
    OutputStream out = response.getOutputStream();
    out.write(bytes);
    out.flush();
  }
}

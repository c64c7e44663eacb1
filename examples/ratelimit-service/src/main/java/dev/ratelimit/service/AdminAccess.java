package dev.ratelimit.service;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Locale;
import java.util.Set;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * State-changing operations need the operator's token, {@code ratelimit-service.admin-token}, as
 * {@code Authorization: Bearer <token>}; without a configured token they are refused ({@code 403}),
 * with one, a missing or wrong token is {@code 401} ({@code WWW-Authenticate: Bearer}).
 *
 * <p>Secure by default: every request that is not {@code GET}, {@code HEAD} or {@code OPTIONS} needs
 * the token, except the open operations, {@code POST /v1/check}, {@code /v1/check-all},
 * {@code /v1/inspect}, and the reservations' {@code /v1/reserve}, {@code /v1/commit} and {@code
 * /v1/cancel}, which settle only what the reserve of the token they are given took (a token is a
 * bearer token: whoever holds it may settle it, once) (matched on the exact raw path, so an unusual spelling of them is guarded,
 * never the other way round). So the resets ({@code DELETE /v1/keys/...}, {@code POST /v1/reset}) and
 * any write operation of an actuator endpoint an operator turns on are guarded, and so is whatever
 * is added later. Runs before the body is read: a refused client sends it for nothing.
 */
@Component
@Order(AdminAccess.ORDER)
class AdminAccess extends OncePerRequestFilter {
  /** After Boot's own filters, before {@link WholeRequestReader}. */
  static final int ORDER = WholeRequestReader.ORDER - 10;
  private static final Set<String> SAFE_METHODS = Set.of("GET", "HEAD", "OPTIONS");
  private static final Set<String> OPEN_POSTS = Set.of("/v1/check", "/v1/check-all", "/v1/inspect", "/v1/reserve",
      "/v1/commit", "/v1/cancel");
  private static final String BEARER = "bearer ";

  /** The SHA-256 of the token, so that comparing takes the same time whatever the length given; null when unset. */
  private final byte[] tokenHash;

  AdminAccess(ServiceProperties properties) {
    this.tokenHash = properties.adminToken() == null ? null : sha256(properties.adminToken());
  }

  @Override
  protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws ServletException, IOException {
    if (!changesState(request)) {
      chain.doFilter(request, response);
      return;
    }
    String instance = request.getRequestURI();
    if (tokenHash == null) {
      Problems.write(response, HttpServletResponse.SC_FORBIDDEN, request.getMethod() + " " + instance
          + " changes state and is turned off: set ratelimit-service.admin-token (environment variable"
          + " RATELIMIT_SERVICE_ADMIN_TOKEN) to a secret of at least " + ServiceProperties.MIN_ADMIN_TOKEN_LENGTH
          + " characters and send it as 'Authorization: Bearer <token>'", instance);
      return;
    }
    String given = bearerToken(request);
    if (given == null) {
      response.setHeader("WWW-Authenticate", "Bearer realm=\"ratelimit-service\"");
      Problems.write(response, HttpServletResponse.SC_UNAUTHORIZED, request.getMethod() + " " + instance
          + " changes state: send the admin token (ratelimit-service.admin-token) as 'Authorization: Bearer <token>'",
          instance);
      return;
    }
    if (!MessageDigest.isEqual(tokenHash, sha256(given))) {
      response.setHeader("WWW-Authenticate", "Bearer realm=\"ratelimit-service\", error=\"invalid_token\"");
      Problems.write(response, HttpServletResponse.SC_UNAUTHORIZED,
          "the bearer token is not the admin token (ratelimit-service.admin-token)", instance);
      return;
    }
    chain.doFilter(request, response);
  }

  private static boolean changesState(HttpServletRequest request) {
    String method = request.getMethod();
    if (SAFE_METHODS.contains(method)) {
      return false;
    }
    String path = request.getRequestURI().substring(request.getContextPath().length());
    return !(method.equals("POST") && OPEN_POSTS.contains(path));
  }

  /** The token of an {@code Authorization: Bearer} header (the scheme in any case), else null. */
  private static String bearerToken(HttpServletRequest request) {
    String authorization = request.getHeader("Authorization");
    if (authorization == null || authorization.length() <= BEARER.length()
        || !authorization.substring(0, BEARER.length()).toLowerCase(Locale.ROOT).equals(BEARER)) {
      return null;
    }
    String token = authorization.substring(BEARER.length()).trim();
    return token.isEmpty() ? null : token;
  }

  private static byte[] sha256(String token) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
  }
}

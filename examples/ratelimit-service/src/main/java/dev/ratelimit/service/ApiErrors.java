package dev.ratelimit.service;

import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;
import tools.jackson.core.JacksonException;
import tools.jackson.core.exc.InputCoercionException;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.exc.UnrecognizedPropertyException;

/**
 * Every error as an RFC 9457 {@code application/problem+json} body. Bad input is {@code 400}, with
 * an {@code invalid-params} member naming the field ({@code key}, {@code policy}, {@code cost},
 * {@code policies[1]}, {@code body}) and why; Spring MVC's own errors (404, 405, 415, …) keep
 * their status. A backend failure in {@code inspect} or {@code reset} (which, unlike checks, have
 * no failure mode) is {@code 503}. Nothing a client sends produces a 500.
 */
@RestControllerAdvice
class ApiErrors extends ResponseEntityExceptionHandler {
  private static final Logger log = LoggerFactory.getLogger(ApiErrors.class);

  @ExceptionHandler(BadRequest.class)
  ResponseEntity<ProblemDetail> badRequest(BadRequest e) {
    return invalid(e.field(), e.getMessage());
  }

  @ExceptionHandler(BackendUnavailable.class)
  ResponseEntity<ProblemDetail> unavailable(BackendUnavailable e) {
    log.warn("rate-limit backend call failed: {}", e.getCause().toString());
    ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE,
        "the rate-limit backend did not answer: retry later (the service's log has the error)");
    return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body(problem);
  }

  @ExceptionHandler(SettleUnconfirmed.class)
  ResponseEntity<ProblemDetail> settleUnconfirmed(SettleUnconfirmed e) {
    ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE, e.getMessage());
    return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body(problem);
  }

  /**
   * An unreadable body, said in the API's terms: the field and the type it must have, never the
   * Java types Jackson names ({@code java.lang.String}, {@code CoercionConfig},
   * {@code StreamReadConstraints}).
   */
  @Override
  protected ResponseEntity<Object> handleHttpMessageNotReadable(HttpMessageNotReadableException e,
      HttpHeaders headers, HttpStatusCode status, WebRequest request) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof BodyTooLarge || t instanceof BodyNotUtf8) { // however deep the JSON reader wrapped it
        return body(invalid("body", t.getMessage()));
      }
    }
    Throwable cause = e.getCause();
    if (cause instanceof UnrecognizedPropertyException unknown) {
      return body(invalid(unknown.getPropertyName(), "unknown field '" + unknown.getPropertyName()
          + "'; known fields: " + unknown.getKnownPropertyIds()));
    }
    if (cause instanceof StreamConstraintsException) {
      return body(invalid("body", "the body exceeds the JSON reader's limits (a number of more than 1000 digits,"
          + " or arrays and objects nested too deeply); a request body is one flat object"));
    }
    if (cause instanceof JacksonException json && !json.getPath().isEmpty()) {
      String field = field(json.getPath());
      String expected = expected(field);
      if (cause instanceof InputCoercionException) {
        return body(invalid(field, "field '" + field + "' is out of range: it must be " + expected));
      }
      return body(invalid(field, "field '" + field + "' has the wrong type: it must be " + expected));
    }
    if (cause instanceof MismatchedInputException) {
      return body(invalid("body", "the body must be a JSON object, e.g. {\"key\": \"user:42\", \"policy\": \"per-user\"}"));
    }
    if (cause instanceof JacksonException json) {
      return body(invalid("body", "malformed JSON" + at(json) + ": " + reason(json)));
    }
    return body(invalid("body", "a JSON object is required as the request body"));
  }

  /** What a field of the request bodies must be, as the OpenAPI document says. */
  private static String expected(String field) {
    return switch (field.replaceAll("\\[\\d+]$", "[]")) {
      case "key" -> "a string, e.g. \"user:42\"";
      case "policy", "policies[]" -> "a string, the name of a configured policy";
      case "policies" -> "an array of policy names, e.g. [\"per-user\", \"per-user-daily\"]";
      case "cost", "estimate" -> "a whole number of at least 1, e.g. 3 (not a string or a fraction)";
      case "actual" -> "a whole number from 1 to 2^52, e.g. 3 (not a string or a fraction)";
      case "token" -> "a string, the token /v1/reserve answered";
      default -> "as the API document (/v1/openapi.yaml) describes it";
    };
  }

  private static String at(JacksonException json) {
    return json.getLocation() == null || json.getLocation().getLineNr() < 1 ? ""
        : " at line " + json.getLocation().getLineNr() + ", column " + json.getLocation().getColumnNr();
  }

  /** Jackson's description of the syntax error, without its source location or anything naming Java. */
  private static String reason(JacksonException json) {
    String message = json.getOriginalMessage() == null ? "" : json.getOriginalMessage();
    int location = message.indexOf(" (start marker at");
    message = (location >= 0 ? message.substring(0, location) : message).strip();
    if (message.isEmpty() || message.contains("`") || message.contains("java.") || message.contains("jackson")) {
      return "not a JSON object";
    }
    return message;
  }

  private static ResponseEntity<Object> body(ResponseEntity<ProblemDetail> entity) {
    return ResponseEntity.status(entity.getStatusCode()).body(entity.getBody());
  }

  static ResponseEntity<ProblemDetail> invalid(String field, String reason) {
    ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, reason);
    problem.setTitle("Invalid request");
    problem.setProperty("invalid-params", List.of(Map.of("name", field, "reason", reason)));
    return ResponseEntity.badRequest().body(problem);
  }

  private static String field(List<JacksonException.Reference> path) {
    StringBuilder field = new StringBuilder();
    for (JacksonException.Reference reference : path) {
      if (reference.getPropertyName() != null) {
        field.append(field.length() == 0 ? "" : ".").append(reference.getPropertyName());
      } else if (reference.getIndex() >= 0) {
        field.append('[').append(reference.getIndex()).append(']');
      }
    }
    return field.length() == 0 ? "body" : field.toString();
  }
}

package dev.ratelimit.service;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.net.URI;
import org.springframework.boot.webmvc.error.ErrorController;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code /error}, where the container forwards the errors the API did not answer itself (such as
 * Tomcat's refusal of {@code TRACE}), as {@code application/problem+json}, in the place of Spring
 * Boot's own JSON. Requested directly, it is a resource like any unknown one: 404.
 */
@RestController
class ProblemErrorController implements ErrorController {

  @RequestMapping("${spring.web.error.path:${error.path:/error}}")
  ResponseEntity<ProblemDetail> error(HttpServletRequest request, HttpServletResponse response) {
    if (request.getDispatcherType() != DispatcherType.ERROR) {
      return problem(HttpStatus.NOT_FOUND.value(), ContainerErrors.detail(404, request.getMethod(), null, null),
          request.getRequestURI());
    }
    int status = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE) instanceof Integer code ? code : 500;
    String reason = request.getAttribute(RequestDispatcher.ERROR_MESSAGE) instanceof String message ? message : null;
    String uri = request.getAttribute(RequestDispatcher.ERROR_REQUEST_URI) instanceof String path ? path : null;
    // an error page is dispatched as a GET; the refused request's method is an attribute
    String method = request.getAttribute(RequestDispatcher.ERROR_METHOD) instanceof String refused ? refused
        : request.getMethod();
    return problem(status, ContainerErrors.detail(status, method, response.getHeader("Allow"), reason), uri);
  }

  private static ResponseEntity<ProblemDetail> problem(int status, String detail, String instance) {
    ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.valueOf(status), detail);
    if (instance != null) {
      problem.setInstance(URI.create(instance));
    }
    return ResponseEntity.status(status).body(problem);
  }
}

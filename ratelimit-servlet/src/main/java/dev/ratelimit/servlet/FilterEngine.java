package dev.ratelimit.servlet;

import dev.ratelimit.http.DeniedResponse;
import dev.ratelimit.http.HeaderOptions;
import dev.ratelimit.http.RateLimitRule;
import dev.ratelimit.internal.http.CompiledRule;
import dev.ratelimit.internal.http.HttpEngine;
import dev.ratelimit.internal.http.ResponseView;
import dev.ratelimit.MultiDecision;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.List;
import java.util.function.Function;
import org.springframework.http.server.PathContainer;

/**
 * The servlet side of the filter, once built: reads a request into the {@link HttpEngine}, which
 * decides, and writes what it decided on the response.
 */
final class FilterEngine {
  private final HttpEngine engine;
  private final DeniedHandler deniedHandler;
  private final Function<HttpServletRequest, String> clientIpOf = this::clientIpOf;

  FilterEngine(HttpEngine engine, DeniedHandler deniedHandler) {
    this.engine = engine;
    this.deniedHandler = deniedHandler != null ? deniedHandler : new WritingHandler(engine.headers());
  }

  /**
   * This engine with {@code newRules} instead of its rules, everything else kept.
   *
   * @throws IllegalArgumentException as {@link RateLimitFilter.Builder#build()} for the same rules
   */
  FilterEngine withRules(List<RateLimitRule> newRules) {
    return new FilterEngine(engine.withRules(newRules), deniedHandler);
  }

  /** The rules' names, in order. */
  List<String> ruleNames() {
    return engine.ruleNames();
  }

  void handle(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    if (request.getAttribute(engine.appliedAttribute()) != null) {
      chain.doFilter(request, response); // a forward, include, async or error dispatch: counted once
      return;
    }
    String path = Matching.pathWithinApplication(request);
    String method = request.getMethod();
    PathContainer container = CompiledRule.container(path);
    PathContainer withoutSlash = path.length() > 1 && path.endsWith("/")
        ? CompiledRule.container(path.substring(0, path.length() - 1)) : null;
    HttpEngine.Plan plan = engine.plan(method, Matching.isCorsPreflight(request), container, withoutSlash,
        new Expressions.RequestValues(request, clientIpOf, path, method));
    if (plan == null) {
      chain.doFilter(request, response); // not marked: where it is forwarded (a filter mapped for FORWARD) may match
      return;
    }
    request.setAttribute(engine.appliedAttribute(), Boolean.TRUE);
    if (plan.missingKey() != null) {
      rejectMissingKey(response, plan.missingKey());
      return;
    }

    HttpEngine.Verdict verdict = plan.checkAll();
    if (!verdict.allowed()) {
      if (verdict.countAfter()) {
        plan.release(); // refused: what earlier count-when rules reserved is given back
      }
      RateLimitResponses.writeHeadersOfDenial(request, response, verdict.checked(), engine.headers());
      deniedHandler.handle(request, response, verdict.decision(), verdict.deniedResponse());
      return;
    }
    RateLimitResponses.writeHeaders(request, response, verdict.checked(), engine.headers());
    if (!verdict.countAfter()) {
      chain.doFilter(request, response);
      return;
    }
    boolean thrown = true;
    try {
      chain.doFilter(request, response);
      thrown = false;
    } finally {
      if (!thrown && request.isAsyncStarted()) {
        request.getAsyncContext().addListener(whenComplete(plan, response)); // the status is known then
      } else {
        // an exception leaving the chain becomes the container's 500, unless the response is already out
        plan.settle(outcome(thrown && !response.isCommitted() ? HttpServletResponse.SC_INTERNAL_SERVER_ERROR
            : response.getStatus(), response));
      }
    }
  }

  /** {@code #response}: {@code status}, and the response's headers as they were set. */
  private static ResponseView outcome(int status, HttpServletResponse response) {
    return ResponseView.of(status, response::getHeader, response::getHeaderNames);
  }

  /** Settles when the asynchronous request completes, with the status it completed with. */
  private static AsyncListener whenComplete(HttpEngine.Plan plan, HttpServletResponse response) {
    return new AsyncListener() {
      @Override
      public void onComplete(AsyncEvent event) {
        HttpServletResponse completed = event.getSuppliedResponse() instanceof HttpServletResponse supplied
            ? supplied : response;
        plan.settle(outcome(completed.getStatus(), completed));
      }

      @Override
      public void onTimeout(AsyncEvent event) {}

      @Override
      public void onError(AsyncEvent event) {}

      @Override
      public void onStartAsync(AsyncEvent event) {
        event.getAsyncContext().addListener(this); // started again: listen to the new cycle
      }
    };
  }

  private String clientIpOf(HttpServletRequest request) {
    return ClientIp.resolve(request, engine);
  }

  /** The default handler: writes the response configured for the denial. */
  private static final class WritingHandler implements DeniedHandler {
    private final HeaderOptions headers;

    WritingHandler(HeaderOptions headers) {
      this.headers = headers;
    }

    @Override
    public void handle(HttpServletRequest request, HttpServletResponse response, MultiDecision decision,
        DeniedResponse configured) throws IOException {
      RateLimitResponses.writeDenied(request, response, decision.decisions(), headers, configured);
    }

    @Override
    public void handle(HttpServletRequest request, HttpServletResponse response, MultiDecision decision)
        throws IOException {
      handle(request, response, decision, DeniedResponse.PROBLEM_JSON);
    }
  }

  private static void rejectMissingKey(HttpServletResponse response, CompiledRule rule) throws IOException {
    if (response.isCommitted()) {
      return;
    }
    response.setStatus(HttpServletResponse.SC_BAD_REQUEST);
    response.setHeader("Cache-Control", "no-store");
    RateLimitResponses.writeBody(response, RateLimitResponses.PROBLEM_JSON, HttpEngine.missingKeyBody(rule));
  }
}

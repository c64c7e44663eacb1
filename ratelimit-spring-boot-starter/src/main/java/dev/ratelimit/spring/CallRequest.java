package dev.ratelimit.spring;

import dev.ratelimit.MultiDecision;
import dev.ratelimit.annotation.RateLimited;
import dev.ratelimit.internal.expression.SandboxContext;
import java.lang.reflect.Method;

/**
 * The HTTP request a {@code @RateLimited} call serves, if any, as the aspect sees it: no servlet
 * type appears here, so the aspect runs in an application without the servlet API (a batch job, a
 * message listener), where {@link #NONE} stands in. {@link ServletCallRequest} is the servlet one.
 */
interface CallRequest {
  /** No request: nothing to read, no headers to write. */
  CallRequest NONE = new CallRequest() {
    @Override
    public Object bind(SandboxContext context) {
      return null;
    }

    @Override
    public void writeHeaders(Object request, Method method, Method specific, RateLimited.Mode mode,
        MultiDecision decision) {}
  };

  /**
   * Sets the request's variables ({@code #request}, {@code #clientIp}, {@code #clientNetwork},
   * {@code #principal}) in {@code context} when the current thread serves a request; that request,
   * else null.
   */
  Object bind(SandboxContext context);

  /**
   * Writes the limit headers of a call that proceeds, or that a fallback method answers, to the
   * response of {@code request} (from {@link #bind}) when the call is the one the request was
   * dispatched to.
   */
  void writeHeaders(Object request, Method method, Method specific, RateLimited.Mode mode, MultiDecision decision);
}

package dev.ratelimit.servlet;

import dev.ratelimit.spi.Backend;
import dev.ratelimit.spi.Command;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/** Stand-ins for tests: requests, responses, a backend that always fails. */
final class Stubs {
  private Stubs() {}

  /** A request from {@code remoteAddr} with header lines given as name, value, name, value... */
  static HttpServletRequest request(String remoteAddr, String... headers) {
    return request(new java.util.HashMap<>(), remoteAddr, headers);
  }

  /**
   * {@link #request(String, String...)} whose attributes are {@code attributes}: two of these on one
   * map are one request before and after a server component rewrote its address and headers.
   */
  static HttpServletRequest request(Map<String, Object> attributes, String remoteAddr, String... headers) {
    Map<String, List<String>> byName = new LinkedHashMap<>();
    for (int i = 0; i < headers.length; i += 2) {
      byName.computeIfAbsent(headers[i].toLowerCase(Locale.ROOT), k -> new ArrayList<>()).add(headers[i + 1]);
    }
    return (HttpServletRequest) Proxy.newProxyInstance(Stubs.class.getClassLoader(),
        new Class<?>[] {HttpServletRequest.class}, (proxy, method, args) -> {
          switch (method.getName()) {
            case "getAttribute":
              return attributes.get((String) args[0]);
            case "setAttribute":
              attributes.put((String) args[0], args[1]);
              return null;
            case "removeAttribute":
              attributes.remove((String) args[0]);
              return null;
            case "getRemoteAddr":
              return remoteAddr;
            case "getMethod":
              return "GET";
            case "getHeaders":
              return Collections.enumeration(byName.getOrDefault(((String) args[0]).toLowerCase(Locale.ROOT), List.of()));
            case "getHeader": {
              List<String> values = byName.get(((String) args[0]).toLowerCase(Locale.ROOT));
              return values == null ? null : values.get(0);
            }
            case "getHeaderNames":
              return Collections.enumeration(byName.keySet());
            case "toString":
              return "request from " + remoteAddr;
            case "hashCode":
              return System.identityHashCode(proxy);
            case "equals":
              return proxy == args[0];
            default:
              return defaultValue(method.getReturnType());
          }
        });
  }

  /** A response that records headers and status. */
  static final class Response {
    final Map<String, String> headers = new LinkedHashMap<>();
    final ByteArrayOutputStream body = new ByteArrayOutputStream();
    int status = 200;
    private final ServletOutputStream out = new ServletOutputStream() {
      @Override
      public boolean isReady() {
        return true;
      }

      @Override
      public void setWriteListener(WriteListener listener) {}

      @Override
      public void write(int b) {
        body.write(b);
      }
    };
    final HttpServletResponse proxy = (HttpServletResponse) Proxy.newProxyInstance(Stubs.class.getClassLoader(),
        new Class<?>[] {HttpServletResponse.class}, (p, method, args) -> {
          switch (method.getName()) {
            case "setHeader":
              if (args[1] == null) {
                headers.remove((String) args[0]); // as the Servlet API: a null value removes the field
              } else {
                headers.put((String) args[0], (String) args[1]);
              }
              return null;
            case "setStatus":
              status = (Integer) args[0];
              return null;
            case "isCommitted":
              return false;
            case "getOutputStream":
              return out;
            case "setContentType":
              headers.put("Content-Type", (String) args[0]);
              return null;
            default:
              return defaultValue(method.getReturnType());
          }
        });
  }

  private static Object defaultValue(Class<?> type) {
    if (type == boolean.class) {
      return false;
    }
    if (type == int.class) {
      return 0;
    }
    if (type == long.class) {
      return 0L;
    }
    return null;
  }

  /** A backend whose every call throws, as an unreachable Redis would. */
  static final class FailingBackend implements Backend {
    final AtomicInteger calls = new AtomicInteger();

    @Override
    public <R> R execute(Command<R> command) {
      if (command instanceof Command.Check || command instanceof Command.CheckAll) {
        calls.incrementAndGet();
      }
      throw new IllegalStateException("backend down");
    }
  }
}

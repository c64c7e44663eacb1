package dev.ratelimit.service;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Caps request bodies at {@code ratelimit-service.max-body-bytes}: reading a body (declared length
 * or chunked) fails as soon as it passes the cap, and the JSON reader's failure becomes a
 * {@code 400} naming {@code body} ({@link ApiErrors}).
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
class BodySizeLimit extends OncePerRequestFilter {
  private final int limit;

  BodySizeLimit(ServiceProperties properties) {
    this.limit = properties.maxBodyBytes();
  }

  @Override
  protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws ServletException, IOException {
    chain.doFilter(new Capped(request, limit), response);
  }

  /** A request whose body stream fails once more than {@code limit} bytes were read. */
  private static final class Capped extends HttpServletRequestWrapper {
    private final int limit;
    private ServletInputStream stream;

    Capped(HttpServletRequest request, int limit) {
      super(request);
      this.limit = limit;
    }

    @Override
    public ServletInputStream getInputStream() throws IOException {
      if (stream == null) {
        stream = new CappedStream(super.getInputStream(), limit);
      }
      return stream;
    }
  }

  private static final class CappedStream extends ServletInputStream {
    private final ServletInputStream in;
    private final int limit;
    private long read;

    CappedStream(ServletInputStream in, int limit) {
      this.in = in;
      this.limit = limit;
    }

    @Override
    public int read() throws IOException {
      int b = in.read();
      if (b >= 0) {
        count(1);
      }
      return b;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
      int n = in.read(buffer, offset, length);
      if (n > 0) {
        count(n);
      }
      return n;
    }

    private void count(int n) throws IOException {
      read += n;
      if (read > limit) {
        throw new BodyTooLarge(limit);
      }
    }

    @Override
    public boolean isFinished() {
      return in.isFinished();
    }

    @Override
    public boolean isReady() {
      return in.isReady();
    }

    @Override
    public void setReadListener(ReadListener listener) {
      in.setReadListener(listener);
    }
  }
}

package dev.ratelimit.service;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Receives each request whole before a worker thread handles it, within
 * {@code ratelimit-service.request-read-timeout} of its first byte.
 *
 * <p>Tomcat reads request lines and headers without holding a worker thread, but a servlet reads
 * its body by blocking one: a client that sends its body a byte at a time held a worker for as long
 * as it liked, and a few hundred such clients took them all. Here the body is read with
 * non-blocking I/O (an async request and a {@link ReadListener}), up to
 * {@code ratelimit-service.max-body-bytes} plus one byte, and the request is dispatched to the
 * application only once it is complete. A request not complete by the deadline, headers included, is
 * answered {@code 408} and its connection closed. A body over the cap is handed on as one whose
 * reading fails with {@link BodyTooLarge} (a {@code 400} naming {@code body}): when its length is
 * declared, unread; when chunked, once it has arrived, its bytes past the cap dropped.
 */
@Component
@Order(WholeRequestReader.ORDER)
class WholeRequestReader extends OncePerRequestFilter {
  /** After Boot's own filters (observation, encoding, request context), so they see the whole exchange. */
  static final int ORDER = -80;
  private static final String BODY = WholeRequestReader.class.getName() + ".body";

  private final int limit;
  private final long timeoutNanos;

  WholeRequestReader(ServiceProperties properties) {
    this.limit = properties.maxBodyBytes();
    this.timeoutNanos = properties.requestReadTimeout().toNanos();
  }

  @Override
  protected boolean shouldNotFilterAsyncDispatch() {
    return false; // the dispatch this filter starts once the body is in: it hands the body on
  }

  @Override
  protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws ServletException, IOException {
    if (isAsyncDispatch(request)) {
      Object body = request.getAttribute(BODY);
      chain.doFilter(body instanceof Body whole ? new Received(request, whole, limit) : request, response);
      return;
    }
    Arrival arrival = Arrival.of(request);
    long leftNanos = timeoutNanos - (System.nanoTime() - arrival.startNanos());
    if (leftNanos <= 0) { // the request line and headers alone took longer than the deadline
      timedOut(request, response, arrival);
      return;
    }
    if (!hasBody(request)) {
      chain.doFilter(request, response);
      return;
    }
    if (request.getContentLengthLong() > limit) { // declared too large: refused without reading it
      arrival.abandonBody();
      chain.doFilter(new Received(request, Body.TOO_LARGE, limit), response);
      return;
    }
    AsyncContext async = request.startAsync();
    async.setTimeout(Math.max(1, TimeUnit.NANOSECONDS.toMillis(leftNanos)));
    Collector collector = new Collector(request, response, async, arrival);
    async.addListener(collector);
    request.getInputStream().setReadListener(collector);
  }

  private static boolean hasBody(HttpServletRequest request) {
    return request.getContentLengthLong() > 0 || request.getHeader("Transfer-Encoding") != null;
  }

  private void timedOut(HttpServletRequest request, HttpServletResponse response, Arrival arrival) throws IOException {
    arrival.abandonBody();
    Problems.write(response, HttpServletResponse.SC_REQUEST_TIMEOUT, "the request did not arrive whole within "
        + deadline() + " of its first byte: send the request line, headers and body without pauses",
        request.getRequestURI());
  }

  private String deadline() {
    return TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms (ratelimit-service.request-read-timeout)";
  }

  /** A whole body, or the mark of one over the cap. */
  private record Body(byte[] bytes, boolean tooLarge) {
    static final Body TOO_LARGE = new Body(new byte[0], true);
  }

  /** Reads the body as it arrives, then dispatches the request, or answers 408 at the deadline. */
  private final class Collector implements ReadListener, AsyncListener {
    private final HttpServletRequest request;
    private final HttpServletResponse response;
    private final AsyncContext async;
    private final Arrival arrival;
    private final ServletInputStream in;
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
    private final byte[] buffer = new byte[4096];
    private final AtomicBoolean done = new AtomicBoolean();
    private boolean tooLarge;

    Collector(HttpServletRequest request, HttpServletResponse response, AsyncContext async, Arrival arrival)
        throws IOException {
      this.request = request;
      this.response = response;
      this.async = async;
      this.arrival = arrival;
      this.in = request.getInputStream();
    }

    @Override
    public void onDataAvailable() throws IOException {
      while (!done.get() && in.isReady()) {
        int n = in.read(buffer);
        if (n < 0) {
          return; // onAllDataRead follows
        }
        if (!tooLarge) {
          bytes.write(buffer, 0, n);
          tooLarge = bytes.size() > limit;
        }
      }
    }

    /**
     * Dispatches the body, or the mark of one over the cap. A chunked body over the cap is read to
     * its end and dropped (within the deadline, without a thread): a response sent while a
     * request's body is still arriving is cut short by Tomcat when it gives up reading.
     */
    @Override
    public void onAllDataRead() {
      dispatch(tooLarge ? Body.TOO_LARGE : new Body(bytes.toByteArray(), false));
    }

    private void dispatch(Body body) {
      if (done.compareAndSet(false, true)) {
        request.setAttribute(BODY, body);
        async.dispatch();
      }
    }

    @Override
    public void onTimeout(AsyncEvent event) throws IOException {
      if (done.compareAndSet(false, true)) {
        timedOut(request, response, arrival);
        async.complete();
      }
    }

    @Override
    public void onError(Throwable failure) {
      // the client went away or broke the framing (a bad chunk): nobody reads an answer
      if (done.compareAndSet(false, true)) {
        arrival.abandonBody();
        async.complete();
      }
    }

    @Override
    public void onError(AsyncEvent event) {
      onError(event.getThrowable());
    }

    @Override
    public void onComplete(AsyncEvent event) {}

    @Override
    public void onStartAsync(AsyncEvent event) {}
  }

  /**
   * The request with its body as received; reading a body over the cap fails with {@link BodyTooLarge},
   * a JSON body that is not UTF-8 with {@link BodyNotUtf8}.
   */
  private static final class Received extends HttpServletRequestWrapper {
    private final Body body;
    private final int limit;

    Received(HttpServletRequest request, Body body, int limit) {
      super(request);
      this.body = body;
      this.limit = limit;
    }

    @Override
    public ServletInputStream getInputStream() {
      return new BytesStream(body.bytes(), body.tooLarge() ? new BodyTooLarge(limit) : notUtf8());
    }

    /** JSON is UTF-8: a JSON body that is not fails at once, saying so, not as a JSON error. */
    private IOException notUtf8() {
      String type = getContentType();
      boolean json = type != null && type.toLowerCase(Locale.ROOT).contains("json");
      String encoding = getCharacterEncoding();
      return json && (encoding == null || encoding.equalsIgnoreCase("UTF-8")) ? BodyNotUtf8.check(body.bytes()) : null;
    }

    @Override
    public BufferedReader getReader() {
      String encoding = getCharacterEncoding();
      Charset charset = encoding == null ? StandardCharsets.UTF_8 : Charset.forName(encoding);
      return new BufferedReader(new InputStreamReader(getInputStream(), charset));
    }
  }

  /** The bytes, or, when {@code failure} is given, a stream whose every read fails with it. */
  private static final class BytesStream extends ServletInputStream {
    private final byte[] bytes;
    private final IOException failure;
    private int position;

    BytesStream(byte[] bytes, IOException failure) {
      this.bytes = bytes;
      this.failure = failure;
    }

    @Override
    public int read() throws IOException {
      if (failure != null) {
        throw failure;
      }
      return position < bytes.length ? bytes[position++] & 0xff : -1;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
      if (failure != null) {
        throw failure;
      }
      if (position >= bytes.length) {
        return -1;
      }
      int n = Math.min(length, bytes.length - position);
      System.arraycopy(bytes, position, buffer, offset, n);
      position += n;
      return n;
    }

    @Override
    public boolean isFinished() {
      return failure == null && position >= bytes.length;
    }

    @Override
    public boolean isReady() {
      return true;
    }

    @Override
    public void setReadListener(ReadListener listener) {
      throw new IllegalStateException("the body was read already; read it as a blocking stream");
    }
  }
}

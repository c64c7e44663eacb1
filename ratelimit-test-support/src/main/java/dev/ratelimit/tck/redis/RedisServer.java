package dev.ratelimit.tck.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.net.ssl.SSLSocketFactory;

/**
 * A redis-server for tests: one this JVM started and owns ({@link #start()}), or one it was
 * pointed at with {@code REDIS_URL} ({@link #shared()}), which it never stops.
 *
 * <p>An owned server runs in the foreground as a child {@link Process} bound to 127.0.0.1 on a free
 * port, with no persistence ({@code --save '' --appendonly no}), its own temporary directory (which
 * holds its log, {@code redis.log}) and {@code DEBUG} enabled for local connections. It is stopped
 * through its process handle only, by {@link #stop()} or {@link #close()}, and at the latest by a
 * shutdown hook when the JVM exits.
 *
 * <pre>{@code
 * try (RedisServer redis = RedisServer.start()) {
 *   redis.command("SET", "k", "v");
 *   redis.restart();                       // same port, empty dataset
 * }
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class RedisServer implements AutoCloseable {
  private static final String LOOPBACK = "127.0.0.1";
  private static final long READY_TIMEOUT_MS = 10_000;
  private static final long STOP_TIMEOUT_MS = 10_000;
  private static final int PROBE_TIMEOUT_MS = 500;
  private static final int START_ATTEMPTS = 5;
  private static final int MAX_IDLE_CONNECTIONS = 8;
  private static final int DEFAULT_CLUSTER_NODE_TIMEOUT_MS = 2_000;

  /** Owned servers that are not closed yet, closed by the shutdown hook. */
  private static final Set<RedisServer> LIVE = ConcurrentHashMap.newKeySet();

  private static boolean hookInstalled; // guarded by RedisServer.class
  private static RedisServer shared; // guarded by RedisServer.class

  private final String host;
  private final int port;
  private final String url;
  private final boolean owned;
  private final Deque<RespConnection> idle = new ConcurrentLinkedDeque<>();

  // how the server's own client logs in: for a server given by URL, from the URL; for an owned one,
  // the user or password it was started with
  private final String user;
  private final String password;
  private final int db;
  /** TLS for the server's own client; null: plain TCP. */
  private final SSLSocketFactory tls;

  // for an owned server
  private final List<String> commandLine;
  private final Path dir;
  private volatile boolean sharedInstance;
  private Process process; // guarded by this
  private volatile long pid = -1;
  private boolean closed; // guarded by this

  private RedisServer(
      String host, int port, String url, String user, String password, int db, SSLSocketFactory tls,
      List<String> commandLine, Path dir) {
    this.host = host;
    this.port = port;
    this.url = url;
    this.owned = commandLine != null;
    this.user = user;
    this.password = password;
    this.db = db;
    this.tls = tls;
    this.commandLine = commandLine;
    this.dir = dir;
  }

  /**
   * The server of this JVM's tests. When the environment variable {@code REDIS_URL} is set (such
   * as {@code redis://127.0.0.1:6379} or {@code redis://host:port/0}), the server it names, which
   * the tests did not start ({@code owned() == false}); otherwise a server started on the first
   * call, owned, and stopped by a shutdown hook when the JVM exits. Every call returns the same
   * instance. Its {@link #close()} does nothing, so that no test can stop it for the others.
   */
  public static synchronized RedisServer shared() {
    if (shared == null) {
      String env = System.getenv("REDIS_URL");
      RedisServer s = env != null && !env.isBlank() ? external(env.trim()) : start();
      s.markShared();
      shared = s;
    }
    return shared;
  }

  /**
   * Starts a new server that this JVM owns, on a free loopback port, from {@link #binary()}, with
   * {@code --bind 127.0.0.1 --port P --save '' --appendonly no --dir <its own temp dir>
   * --enable-debug-command local} (the last flag only for Redis 7 and later). It returns once the
   * server answers {@code PING} (at most 10 s, then it fails with the end of the server's log); a
   * port taken meanwhile by someone else is retried with another port.
   */
  public static RedisServer start() {
    return builder().start();
  }

  /**
   * A builder for a server this JVM owns, started as {@link #start()} does and with more: a
   * password, an ACL user, TLS, a replica, Sentinel, or any other flags.
   *
   * <pre>{@code
   * try (RedisServer redis = RedisServer.builder().user("limiter", "s3cret").tls(certs).start()) {
   *   redis.command("SET", "k", "v");      // the test's own client logs in as limiter, through TLS
   * }
   * }</pre>
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The {@code redis-server} binary that {@link #start()} runs: {@code redis-server} on {@code
   * PATH}; otherwise the one shipped by {@code com.github.lansheng228:embedded-redis:7.0.9},
   * extracted once per JVM under {@code java.io.tmpdir}. The system property {@code
   * ratelimit.redis.binary} overrides this: {@code embedded} forces the shipped binary, any other
   * value is the path of the binary to run.
   */
  public static Path binary() {
    return RedisBinary.find();
  }

  /** The shipped binary, extracted if it is not already (for tests of the fallback). */
  static Path embeddedBinary() {
    return RedisBinary.embedded();
  }

  /** A server this JVM does not own, given by {@code redis://[[user]:password@]host[:port][/db]}. */
  static RedisServer external(String url) {
    URI uri = URI.create(url);
    if (!"redis".equals(uri.getScheme()) || uri.getHost() == null) {
      throw new IllegalArgumentException("not a redis://host:port URL: " + url);
    }
    String path = uri.getPath() == null ? "" : uri.getPath().replaceFirst("^/", "");
    int db = path.isEmpty() ? 0 : Integer.parseInt(path);
    String user = null;
    String password = null;
    if (uri.getUserInfo() != null) {
      int colon = uri.getUserInfo().indexOf(':');
      user = colon <= 0 ? null : uri.getUserInfo().substring(0, colon);
      password = uri.getUserInfo().substring(colon + 1);
    }
    int port = uri.getPort() < 0 ? 6379 : uri.getPort();
    return new RedisServer(uri.getHost(), port, url, user, password, db, null, null, null);
  }

  /** Starts an owned server from {@code binary}; a cluster node also gets a free bus port. */
  static RedisServer start(Path binary, boolean clusterNode) {
    return start(binary, clusterNode, DEFAULT_CLUSTER_NODE_TIMEOUT_MS);
  }

  /** Starts an owned cluster node from {@code binary} whose {@code cluster-node-timeout} is {@code nodeTimeoutMs}. */
  static RedisServer start(Path binary, boolean clusterNode, int nodeTimeoutMs) {
    Builder b = builder();
    b.clusterNode = clusterNode;
    b.clusterNodeTimeoutMs = nodeTimeoutMs;
    return b.start(binary);
  }

  private static RedisServer start(Path binary, Builder options) {
    int major = RedisBinary.major(binary);
    if (options.certificates != null && !RedisBinary.supportsTls(binary)) {
      throw new TlsUnsupportedException(binary + " was built without TLS (it has no OpenSSL): it cannot serve "
          + "--tls-port; put a redis-server built with TLS on PATH, or name one with -D" + RedisBinary.PROPERTY);
    }
    PortTakenException taken = null;
    for (int attempt = 0; attempt < START_ATTEMPTS; attempt++) {
      int port = FreePorts.freePort(options.clusterNode);
      Path dir;
      try {
        dir = Files.createTempDirectory("ratelimit-redis-" + port + "-");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      List<String> cmd = RedisCommandLine.of(binary, major, options, port, dir);
      String scheme = options.certificates != null ? "rediss" : "redis";
      SSLSocketFactory tls = options.certificates == null ? null
          : options.certificates.clientContext().getSocketFactory();
      RedisServer s = new RedisServer(LOOPBACK, port, scheme + "://" + LOOPBACK + ":" + port,
          options.user, options.user != null ? options.userPassword : options.password, 0, tls, cmd, dir);
      try {
        s.launch();
        return s;
      } catch (PortTakenException e) {
        s.shutdown();
        taken = e;
      } catch (RuntimeException | Error e) {
        s.shutdown();
        throw e;
      }
    }
    throw new IllegalStateException(
        "redis-server could not bind a free port in " + START_ATTEMPTS + " attempts", taken);
  }

  /** The host: 127.0.0.1 for an owned server. */
  public String host() {
    return host;
  }

  /** The port. */
  public int port() {
    return port;
  }

  /**
   * {@code redis://127.0.0.1:PORT} for an owned server ({@code rediss://} with TLS); the given URL
   * for one this JVM does not own. Never with the credentials.
   */
  public String url() {
    return url;
  }

  /** Whether this JVM started the server (and may stop it). */
  public boolean owned() {
    return owned;
  }

  /** The server's process id (of its last process once stopped); -1 when not owned. */
  public long pid() {
    return pid;
  }

  /**
   * Stops the server: ends its process (by its handle, so by PID) and waits until it has exited.
   * Does nothing when it is already stopped. The port then refuses connections.
   *
   * @throws IllegalStateException when this JVM does not own the server
   */
  public synchronized void stop() {
    requireOwned("stop");
    Process p = process;
    process = null;
    closeIdle();
    if (p != null) {
      end(p);
    }
  }

  /**
   * Kills the server as a crash would: {@code SIGKILL} to its process (by its handle, so by PID),
   * then waits until it has exited. Nothing is flushed, no replica is told; a Cluster or Sentinel
   * sees it only when it stops answering. Does nothing when it is already stopped; {@link
   * #restart()} starts it again.
   *
   * @throws IllegalStateException when this JVM does not own the server
   */
  public synchronized void kill() {
    requireOwned("kill");
    Process p = process;
    process = null;
    closeIdle();
    if (p != null) {
      p.destroyForcibly();
      end(p);
    }
  }

  /** Whether this JVM's process of the server runs (false once stopped or killed; for a server it does not own, false). */
  public synchronized boolean running() {
    return process != null && process.isAlive();
  }

  /** The first executable {@code name} (e.g. {@code redis-benchmark}) on {@code PATH}, or null. */
  public static java.nio.file.Path executableOnPath(String name) {
    return RedisBinary.onPath(name);
  }

  /**
   * Stops the server if it runs, then starts it again on the same port with the same flags, and
   * waits until it answers {@code PING}. Its dataset is empty (there is no persistence); a cluster
   * node keeps its cluster configuration ({@code nodes.conf}).
   *
   * @throws IllegalStateException when this JVM does not own the server, or it is closed
   */
  public synchronized void restart() {
    requireOwned("restart");
    if (closed) {
      throw new IllegalStateException("closed: " + this);
    }
    stop();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
    while (true) {
      try {
        launch();
        return;
      } catch (PortTakenException e) {
        // the same port, which the clients reconnect to: a client's own reconnecting socket can hold
        // it for a moment (a self-connect); give it up to a second to go
        if (System.nanoTime() > deadline) {
          throw e;
        }
        try {
          Thread.sleep(100);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw e;
        }
      }
    }
  }

  /**
   * Sends one command on a pooled connection (or a new one) and returns the reply: a {@code
   * String} (simple or bulk string), a {@code Long}, a {@code List<Object>} or {@code null}.
   * Arguments are sent as their {@code toString()}, a {@code byte[]} as is. A pooled connection
   * that the server has closed meanwhile is replaced and the command sent on a new one.
   *
   * @throws RedisReplyException when Redis answers with an error
   * @throws UncheckedIOException when the server cannot be reached
   */
  public Object command(Object... args) {
    RespConnection c = idle.pollFirst();
    boolean pooled = c != null;
    if (c == null) {
      try {
        c = connect();
      } catch (IOException e) {
        throw new UncheckedIOException("cannot connect to " + host + ":" + port + ": " + e, e);
      }
    }
    try {
      Object reply;
      try {
        reply = c.call(args);
      } catch (RespConnection.ClosedException e) {
        if (!pooled) {
          throw e;
        }
        c.close();
        c = connect();
        reply = c.call(args);
      }
      release(c);
      return reply;
    } catch (RedisReplyException e) {
      release(c); // an error reply leaves the connection in step
      throw e;
    } catch (IOException e) {
      c.close();
      throw new UncheckedIOException(
          (args.length > 0 ? args[0] : "") + " on " + host + ":" + port + ": " + e.getMessage(), e);
    } catch (RuntimeException | Error e) {
      c.close();
      throw e;
    }
  }

  /** The text of {@code INFO section}, such as {@code info("server")}. */
  public String info(String section) {
    return (String) command("INFO", section);
  }

  /**
   * Stops the server if this JVM owns it and deletes its directory; for one it does not own (and
   * for the {@link #shared()} instance) it only closes idle connections.
   */
  @Override
  public void close() {
    if (!owned || sharedInstance) {
      closeIdle();
    } else {
      shutdown();
    }
  }

  /** Makes {@link #close()} leave the server running: it belongs to every test of the JVM. */
  void markShared() {
    sharedInstance = true;
  }

  /** Stops an owned server for good and deletes its directory. */
  private synchronized void shutdown() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      stop();
    } finally {
      LIVE.remove(this);
      deleteDir();
    }
  }

  @Override
  public String toString() {
    return "RedisServer[" + url + (owned ? ", pid " + pid : ", not owned") + "]";
  }

  // ---------------------------------------------------------------------------------------------

  /** Starts the process and waits until it answers PING; on failure, ends it and throws. */
  private synchronized void launch() {
    Path log = dir.resolve("redis.log");
    Process p;
    try {
      p = new ProcessBuilder(commandLine)
          .directory(dir.toFile())
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + commandLine.get(0), e);
    }
    process = p;
    pid = p.pid();
    register(this);
    try {
      awaitReady(p);
    } catch (RuntimeException | Error e) {
      process = null;
      end(p);
      throw e;
    }
  }

  private void awaitReady(Process p) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(READY_TIMEOUT_MS);
    while (true) {
      if (!p.isAlive()) {
        String tail = logTail();
        String msg = "redis-server on port " + port + " exited with code " + p.exitValue()
            + "; the end of " + dir.resolve("redis.log") + ":\n" + tail;
        if (tail.contains("Address already in use")) {
          throw new PortTakenException(msg);
        }
        throw new IllegalStateException(msg);
      }
      try (RespConnection c = connect(PROBE_TIMEOUT_MS)) {
        if ("PONG".equals(c.call("PING"))) {
          String info = (String) c.call("INFO", "server");
          if (!info.contains("process_id:" + p.pid() + "\r\n")) {
            throw new PortTakenException("port " + port + " is served by another process: " + info);
          }
          return;
        }
      } catch (IOException | RedisReplyException e) {
        // not listening yet, or still loading
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("redis-server on port " + port + " did not answer PING in "
            + READY_TIMEOUT_MS + " ms; the end of " + dir.resolve("redis.log") + ":\n" + logTail());
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while starting redis-server", e);
      }
    }
  }

  /** Ends {@code p} (SIGTERM, then SIGKILL after 10 s) and waits for it to exit. */
  private static void end(Process p) {
    boolean interrupted = false;
    try {
      p.destroy();
      while (true) {
        try {
          if (!p.waitFor(STOP_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            if (!p.waitFor(STOP_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
              throw new IllegalStateException("redis-server pid " + p.pid() + " does not exit");
            }
          }
          return;
        } catch (InterruptedException e) {
          interrupted = true; // finish stopping it, then restore the flag
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private RespConnection connect() throws IOException {
    return connect(RespConnection.READ_TIMEOUT_MS);
  }

  /** A connection, logged in and on the database, whose replies may take up to {@code readTimeoutMs}. */
  private RespConnection connect(int readTimeoutMs) throws IOException {
    RespConnection c = RespConnection.open(host, port, readTimeoutMs, tls);
    try {
      if (password != null) {
        if (user != null) {
          c.call("AUTH", user, password);
        } else {
          c.call("AUTH", password);
        }
      }
      if (db != 0) {
        c.call("SELECT", db);
      }
      return c;
    } catch (IOException | RuntimeException e) {
      c.close();
      throw e;
    }
  }

  private void release(RespConnection c) {
    if (idle.size() < MAX_IDLE_CONNECTIONS) {
      idle.offerFirst(c);
    } else {
      c.close();
    }
  }

  private void closeIdle() {
    for (RespConnection c; (c = idle.pollFirst()) != null; ) {
      c.close();
    }
  }

  private void requireOwned(String what) {
    if (!owned) {
      throw new IllegalStateException("cannot " + what + " " + url + ": this JVM did not start it");
    }
  }

  private String logTail() {
    try {
      List<String> lines = Files.readAllLines(dir.resolve("redis.log"), StandardCharsets.UTF_8);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  private void deleteDir() {
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException e) {
      // a temporary directory left behind
    }
  }

  private static synchronized void register(RedisServer s) {
    LIVE.add(s);
    if (!hookInstalled) {
      hookInstalled = true;
      Runtime.getRuntime().addShutdownHook(new Thread(RedisServer::closeAll, "redis-server-stop"));
    }
  }

  /** Stops every owned server still running; run by the shutdown hook. */
  private static void closeAll() {
    for (RedisServer s : LIVE) {
      try {
        s.shutdown();
      } catch (RuntimeException e) {
        System.err.println("could not stop " + s + ": " + e);
      }
    }
  }

  /**
   * Starts owned servers with more than {@link #start()}'s flags. Not thread-safe; each {@link
   * #start()} starts a new server.
   */
  public static final class Builder {
    String password;
    String user;
    String userPassword;
    TestCertificates certificates;
    String sentinelConfig;
    boolean clusterNode;
    int clusterNodeTimeoutMs = DEFAULT_CLUSTER_NODE_TIMEOUT_MS;
    final List<String> args = new ArrayList<>();

    private Builder() {}

    /**
     * The default user's password ({@code --requirepass}); the server's own client sends it.
     */
    public Builder password(String password) {
      this.password = password;
      return this;
    }

    /**
     * An ACL user with every right ({@code --user NAME on >PASSWORD ~* &* +@all}), and the default
     * user turned off: only this user can log in, so a client that reached the server's data did
     * send these credentials. The server's own client logs in as this user.
     */
    public Builder user(String name, String password) {
      this.user = name;
      this.userPassword = password;
      return this;
    }

    /**
     * TLS only ({@code --port 0 --tls-port P} with {@code certificates}' server files, clients not
     * asked for certificates): {@link RedisServer#url()} is {@code rediss://127.0.0.1:P}, and the server's own
     * client connects through TLS, trusting the certificates' CA.
     *
     * @throws TlsUnsupportedException from {@link #start()} when the binary was built without TLS
     */
    public Builder tls(TestCertificates certificates) {
      this.certificates = certificates;
      return this;
    }

    /**
     * A Sentinel instead of a data node: {@code redis-server sentinel.conf --sentinel}, where
     * {@code sentinel.conf} is written into the server's own directory with {@code config} (its
     * {@code sentinel monitor} lines and so on; the port, bind address and directory come from the
     * command line).
     */
    public Builder sentinel(String config) {
      this.sentinelConfig = config;
      return this;
    }

    /** More flags for the command line, after the others, such as {@code "--replicaof", host, port}. */
    public Builder args(String... args) {
      this.args.addAll(List.of(args));
      return this;
    }

    /**
     * Starts the server on a free loopback port, and returns once it answers {@code PING} to its
     * own client (at most 10 s; then it fails with the end of its log).
     */
    public RedisServer start() {
      return start(binary());
    }

    RedisServer start(Path binary) {
      return RedisServer.start(binary, this);
    }
  }

  /**
   * The binary cannot serve TLS: it was built without it. A test that needs TLS fails with it, never
   * skips: Debian's redis-server and the embedded one have TLS, and another is named with {@code
   * -Dratelimit.redis.binary}.
   */
  public static final class TlsUnsupportedException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    TlsUnsupportedException(String message) {
      super(message);
    }
  }

  /** The port was taken by someone else between choosing it and the server binding it. */
  private static final class PortTakenException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    PortTakenException(String message) {
      super(message);
    }
  }

  /** Stops every one of {@code servers}; the first failure is thrown, with the others suppressed in it. */
  static void closeAll(Iterable<RedisServer> servers) {
    RuntimeException failure = null;
    for (RedisServer server : servers) {
      try {
        server.close();
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }
}

package dev.ratelimit.tck.redis;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds a {@code redis-server} binary: the system property {@value #PROPERTY} when set ({@code
 * embedded}, or a path), else {@code redis-server} on {@code PATH}, else the binary shipped by
 * {@code com.github.lansheng228:embedded-redis}, extracted once per JVM.
 */
final class RedisBinary {
  /** {@code embedded} forces the shipped binary; any other non-blank value is a binary's path. */
  static final String PROPERTY = "ratelimit.redis.binary";
  /** The version of the binary that the embedded-redis artifact ships. */
  static final String EMBEDDED_VERSION = "7.0.9";

  private static final Pattern VERSION = Pattern.compile("v=(\\d+)\\.(\\d+)\\.(\\d+)");
  private static final Map<Path, String> VERSIONS = new ConcurrentHashMap<>();
  private static final Map<Path, Boolean> TLS = new ConcurrentHashMap<>();
  private static Path embedded; // guarded by RedisBinary.class

  private RedisBinary() {}

  /** The binary to run; see the class comment for the order. */
  static Path find() {
    String forced = System.getProperty(PROPERTY, "").trim();
    if (forced.equals("embedded")) {
      return embedded();
    }
    if (!forced.isEmpty()) {
      Path p = Path.of(forced);
      if (!Files.isRegularFile(p) || !Files.isExecutable(p)) {
        throw new IllegalStateException("-D" + PROPERTY + "=" + forced + " is not an executable file");
      }
      return p;
    }
    Path onPath = onPath("redis-server");
    return onPath != null ? onPath : embedded();
  }

  /** The first executable {@code name} in a directory of {@code PATH}, or null. */
  static Path onPath(String name) {
    String path = System.getenv("PATH");
    if (path == null) {
      return null;
    }
    for (String dir : path.split(Pattern.quote(File.pathSeparator))) {
      if (dir.isEmpty()) {
        continue;
      }
      Path candidate = Path.of(dir, name);
      if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    return null;
  }

  /**
   * The shipped binary, extracted from the classpath into {@code
   * <java.io.tmpdir>/ratelimit-redis-7.0.9/} the first time (atomically: written to a temporary
   * file, made executable, then moved into place), and reused after that only when this user owns
   * it and its bytes are the resource's: a file put there by another user of a shared machine, or
   * a damaged one, is never run; the binary then goes to a new private directory of this JVM.
   */
  static synchronized Path embedded() {
    if (embedded != null) {
      return embedded;
    }
    String resource = resourceName();
    Path dir = Path.of(System.getProperty("java.io.tmpdir"), "ratelimit-redis-" + EMBEDDED_VERSION);
    Path target = dir.resolve(resource);
    try {
      if (Files.isRegularFile(target) && !trusted(target, resource)) {
        Path own = Files.createTempDirectory("ratelimit-redis-" + EMBEDDED_VERSION + "-");
        own.toFile().deleteOnExit();
        target = own.resolve(resource);
        target.toFile().deleteOnExit();
        dir = own;
      }
      if (!Files.isRegularFile(target) || !Files.isExecutable(target)) {
        Files.createDirectories(dir);
        Path part = Files.createTempFile(dir, resource + "-", ".part");
        try {
          try (InputStream in = resource(resource)) {
            Files.copy(in, part, StandardCopyOption.REPLACE_EXISTING);
          }
          File f = part.toFile();
          if (!f.setReadable(true, false) || !f.setExecutable(true, false)) {
            throw new IOException("cannot make " + part + " executable");
          }
          Files.move(part, target, StandardCopyOption.ATOMIC_MOVE);
        } finally {
          Files.deleteIfExists(part);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot extract " + resource + " to " + dir, e);
    }
    embedded = target;
    return target;
  }

  /** For tests: forgets the extracted binary, so that the next {@link #embedded()} looks again. */
  static synchronized void forgetEmbedded() {
    embedded = null;
  }

  /** Whether {@code file} belongs to this user and holds exactly the bytes of {@code resource}. */
  private static boolean trusted(Path file, String resource) throws IOException {
    if (!Files.getOwner(file).getName().equals(System.getProperty("user.name"))) {
      return false;
    }
    try (InputStream expected = new java.io.BufferedInputStream(resource(resource));
        InputStream actual = new java.io.BufferedInputStream(Files.newInputStream(file))) {
      int e;
      do {
        e = expected.read();
        if (e != actual.read()) {
          return false;
        }
      } while (e != -1);
      return true;
    }
  }

  private static InputStream resource(String resource) {
    InputStream in = RedisBinary.class.getClassLoader().getResourceAsStream(resource);
    if (in == null) {
      throw new IllegalStateException("no redis-server on PATH, and the resource " + resource
          + " is not on the classpath (it comes from com.github.lansheng228:embedded-redis:" + EMBEDDED_VERSION + ")");
    }
    return in;
  }

  /** The classpath resource for this OS and architecture, e.g. {@code redis-server-7.0.9-linux-amd64}. */
  static String resourceName() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    String o = os.startsWith("linux") ? "linux" : os.startsWith("mac") ? "darwin" : null;
    String a =
        arch.equals("amd64") || arch.equals("x86_64")
            ? "amd64"
            : arch.equals("aarch64") || arch.equals("arm64") ? "arm64" : null;
    if (o == null || a == null) {
      throw new IllegalStateException(
          "no redis-server on PATH, and embedded-redis ships no binary for " + os + "/" + arch);
    }
    return "redis-server-" + EMBEDDED_VERSION + "-" + o + "-" + a;
  }

  /**
   * Whether {@code binary} was built with TLS: it names OpenSSL's {@code SSL_CTX_new} (linked
   * dynamically, it is in the symbol table; statically, in the code). Read once per binary.
   */
  static boolean supportsTls(Path binary) {
    return TLS.computeIfAbsent(binary, RedisBinary::namesOpenSsl);
  }

  private static boolean namesOpenSsl(Path binary) {
    byte[] needle = "SSL_CTX_new".getBytes(StandardCharsets.US_ASCII);
    try (InputStream in = new java.io.BufferedInputStream(Files.newInputStream(binary), 1 << 16)) {
      int matched = 0;
      for (int b = in.read(); b != -1; b = in.read()) {
        matched = b == needle[matched] ? matched + 1 : (b == needle[0] ? 1 : 0);
        if (matched == needle.length) {
          return true;
        }
      }
      return false;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + binary, e);
    }
  }

  /** The version {@code binary --version} reports, such as {@code 7.0.15}; cached per binary. */
  static String version(Path binary) {
    return VERSIONS.computeIfAbsent(binary, RedisBinary::runVersion);
  }

  /** The major version of {@code binary}, such as 7. */
  static int major(Path binary) {
    String v = version(binary);
    return Integer.parseInt(v.substring(0, v.indexOf('.')));
  }

  private static String runVersion(Path binary) {
    String output;
    try {
      Process p = new ProcessBuilder(binary.toString(), "--version").redirectErrorStream(true).start();
      try (InputStream in = p.getInputStream()) {
        output = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
      }
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException(binary + " --version did not exit");
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + binary + " --version", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted running " + binary + " --version", e);
    }
    Matcher m = VERSION.matcher(output);
    if (!m.find()) {
      throw new IllegalStateException(binary + " --version printed no version: " + output);
    }
    return m.group(1) + "." + m.group(2) + "." + m.group(3);
  }
}

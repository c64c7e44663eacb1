package dev.ratelimit.tck.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A certificate authority and a server certificate it signed, made for one test run by the JDK's
 * {@code keytool} in a directory of the caller's: the server's certificate names {@code
 * 127.0.0.1} and {@code localhost} (so that a client verifying host names accepts it) and is valid
 * for two days. Keys are EC P-256. The files are what {@code redis-server --tls-*} and the usual
 * client settings take:
 *
 * <ul>
 *   <li>{@link #caCertificate()}: the CA's certificate, PEM ({@code --tls-ca-cert-file}, or a
 *       client's trust);</li>
 *   <li>{@link #serverCertificate()} and {@link #serverKey()}: the server's certificate and its
 *       unencrypted PKCS#8 key, PEM ({@code --tls-cert-file}, {@code --tls-key-file});</li>
 *   <li>{@link #trustStore()}: a PKCS#12 trust store holding the CA, password {@value #PASSWORD}.</li>
 * </ul>
 *
 * <pre>{@code
 * TestCertificates certs = TestCertificates.create(tempDir);
 * try (RedisServer redis = RedisServer.builder().tls(certs).start()) {
 *   redis.url();   // rediss://127.0.0.1:PORT
 * }
 * }</pre>
 */
public final class TestCertificates {
  /** The password of every key store made here. */
  public static final String PASSWORD = "changeit";

  private static final long KEYTOOL_TIMEOUT_S = 60;

  private final Path dir;

  private TestCertificates(Path dir) {
    this.dir = dir;
  }

  /**
   * Makes the CA, the server's key and certificate, and the trust store in {@code dir} (which must
   * exist), running {@code keytool} of the JDK that runs the tests.
   *
   * @throws IllegalStateException when keytool fails, with its output
   */
  public static TestCertificates create(Path dir) {
    TestCertificates c = new TestCertificates(dir);
    Path ca = dir.resolve("ca.p12");
    Path server = dir.resolve("server.p12");
    Path request = dir.resolve("server.csr");
    keytool("-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1",
        "-dname", "CN=ratelimit test CA", "-ext", "bc:c", "-validity", "2", "-keystore", ca.toString());
    keytool("-exportcert", "-rfc", "-alias", "ca", "-keystore", ca.toString(), "-file", c.caCertificate().toString());
    keytool("-genkeypair", "-alias", "server", "-keyalg", "EC", "-groupname", "secp256r1",
        "-dname", "CN=localhost", "-validity", "2", "-keystore", server.toString());
    keytool("-certreq", "-alias", "server", "-keystore", server.toString(), "-file", request.toString());
    keytool("-gencert", "-rfc", "-alias", "ca", "-keystore", ca.toString(), "-infile", request.toString(),
        "-outfile", c.serverCertificate().toString(), "-validity", "2",
        "-ext", "san=ip:127.0.0.1,dns:localhost", "-ext", "eku=serverAuth", "-ext", "ku=digitalSignature");
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      try (InputStream in = Files.newInputStream(server)) {
        store.load(in, PASSWORD.toCharArray());
      }
      PrivateKey key = (PrivateKey) store.getKey("server", PASSWORD.toCharArray());
      Files.writeString(c.serverKey(), pem("PRIVATE KEY", key.getEncoded()), StandardCharsets.US_ASCII);
      KeyStore trust = KeyStore.getInstance("PKCS12");
      trust.load(null, null);
      trust.setCertificateEntry("ca", c.ca());
      try (OutputStream out = Files.newOutputStream(c.trustStore())) {
        trust.store(out, PASSWORD.toCharArray());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot write the test key and trust store in " + dir, e);
    }
    return c;
  }

  /** The CA's certificate, PEM. */
  public Path caCertificate() {
    return dir.resolve("ca.pem");
  }

  /** The server's certificate, PEM, signed by the CA, for 127.0.0.1 and localhost. */
  public Path serverCertificate() {
    return dir.resolve("server.pem");
  }

  /** The server's private key, PEM (PKCS#8, unencrypted). */
  public Path serverKey() {
    return dir.resolve("server.key");
  }

  /** A PKCS#12 trust store holding the CA's certificate; its password is {@value #PASSWORD}. */
  public Path trustStore() {
    return dir.resolve("truststore.p12");
  }

  /** A TLS context that trusts the CA (and nothing else). */
  public SSLContext clientContext() {
    try {
      KeyStore trust = KeyStore.getInstance("PKCS12");
      trust.load(null, null);
      trust.setCertificateEntry("ca", ca());
      TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, tmf.getTrustManagers(), null);
      return context;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot build a TLS context on " + caCertificate(), e);
    }
  }

  private Certificate ca() throws IOException, GeneralSecurityException {
    try (InputStream in = Files.newInputStream(caCertificate())) {
      return CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
        + "\n-----END " + type + "-----\n";
  }

  private static void keytool(String... args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    command.addAll(List.of(args));
    command.addAll(List.of("-storetype", "PKCS12", "-storepass", PASSWORD, "-noprompt"));
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String output;
      try (InputStream in = p.getInputStream()) {
        output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
      if (!p.waitFor(KEYTOOL_TIMEOUT_S, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException("keytool " + args[0] + " did not exit in " + KEYTOOL_TIMEOUT_S + " s");
      }
      if (p.exitValue() != 0) {
        throw new IllegalStateException("keytool " + String.join(" ", args) + " exited with " + p.exitValue()
            + ":\n" + output);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + command.get(0), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted running keytool", e);
    }
  }
}

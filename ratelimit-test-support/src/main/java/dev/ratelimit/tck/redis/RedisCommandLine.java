package dev.ratelimit.tck.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The {@code redis-server} command line of an owned server, from its builder's options. */
final class RedisCommandLine {
  private static final String LOOPBACK = "127.0.0.1";

  private RedisCommandLine() {}

  /**
   * The command that starts {@code binary} (of major version {@code major}) on loopback {@code
   * port}, in {@code dir}, as {@code options} say.
   */
  static List<String> of(Path binary, int major, RedisServer.Builder options, int port, Path dir) {
  List<String> cmd = new ArrayList<>(List.of(binary.toString()));
  if (options.sentinelConfig != null) {
    // Sentinel rewrites its configuration file: it must be a file of its own, writable
    Path conf = dir.resolve("sentinel.conf");
    try {
      Files.writeString(conf, options.sentinelConfig, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    cmd.addAll(List.of(conf.toString(), "--sentinel"));
  }
  String plainPort = Integer.toString(port);
  if (options.certificates != null) {
    plainPort = "0"; // TLS only: no plain port at all
    cmd.addAll(List.of("--tls-port", Integer.toString(port),
        "--tls-cert-file", options.certificates.serverCertificate().toString(),
        "--tls-key-file", options.certificates.serverKey().toString(),
        "--tls-ca-cert-file", options.certificates.caCertificate().toString(),
        "--tls-auth-clients", "no"));
  }
  cmd.addAll(List.of("--bind", LOOPBACK, "--port", plainPort, "--daemonize", "no", "--dir", dir.toString()));
  if (options.sentinelConfig == null) {
    cmd.addAll(List.of("--save", "", "--appendonly", "no"));
    if (major >= 7) {
      cmd.addAll(List.of("--enable-debug-command", "local"));
    }
  }
  if (options.clusterNode) {
    cmd.addAll(List.of("--cluster-enabled", "yes",
        "--cluster-config-file", dir.resolve("nodes.conf").toString(),
        "--cluster-node-timeout", Integer.toString(options.clusterNodeTimeoutMs)));
  }
  if (options.password != null) {
    cmd.addAll(List.of("--requirepass", options.password));
  }
  if (options.user != null) {
    // the one user that may log in: a client that sends no credentials, or others, is refused
    cmd.addAll(List.of("--user", "default", "off"));
    cmd.addAll(List.of("--user", options.user, "on", ">" + options.userPassword, "~*", "&*", "+@all"));
  }
  cmd.addAll(options.args);
    return cmd;
  }
}

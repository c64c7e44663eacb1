package dev.ratelimit.tck.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Servers with credentials and TLS, for the tests of clients that must send them. */
class RedisServerBuilderTest {
  @Test
  void aServerWithAUserRefusesEveryoneElseAndItsOwnClientLogsIn() throws Exception {
    try (RedisServer redis = RedisServer.builder().user("limiter", "s3cret").start()) {
      assertThat(redis.command("ACL", "WHOAMI")).isEqualTo("limiter");
      assertThat(redis.command("SET", "k", "v")).isEqualTo("OK");
      try (RespConnection anonymous = RespConnection.open(redis.host(), redis.port())) {
        assertThatThrownBy(() -> anonymous.call("GET", "k")).isInstanceOf(RedisReplyException.class)
            .hasMessageStartingWith("NOAUTH");
        assertThatThrownBy(() -> anonymous.call("AUTH", "limiter", "wrong")).isInstanceOf(RedisReplyException.class)
            .hasMessageStartingWith("WRONGPASS");
        assertThatThrownBy(() -> anonymous.call("AUTH", "default", "")).isInstanceOf(RedisReplyException.class)
            .hasMessageStartingWith("WRONGPASS");
      }
    }
  }

  @Test
  void aServerWithAPasswordAsksTheDefaultUserForIt() throws Exception {
    try (RedisServer redis = RedisServer.builder().password("pw").start()) {
      assertThat(redis.command("ACL", "WHOAMI")).isEqualTo("default");
      try (RespConnection anonymous = RespConnection.open(redis.host(), redis.port())) {
        assertThatThrownBy(() -> anonymous.call("PING")).hasMessageStartingWith("NOAUTH");
      }
    }
  }

  @Test
  void aTlsServerAnswersOnlyThroughTlsWithTheCertificateMadeForIt(@TempDir Path dir) throws Exception {
    TestCertificates certs = TestCertificates.create(dir);
    try (RedisServer redis = RedisServer.builder().tls(certs).start()) {
      assertThat(redis.url()).isEqualTo("rediss://127.0.0.1:" + redis.port());
      assertThat(redis.command("SET", "k", "v")).isEqualTo("OK");
      assertThat(redis.command("CONFIG", "GET", "port")).as("no plain port").isEqualTo(List.of("port", "0"));
      try (RespConnection plain = RespConnection.open(redis.host(), redis.port(), 2_000)) {
        assertThatThrownBy(() -> plain.call("PING")).as("plain RESP on the TLS port")
            .isInstanceOf(IOException.class);
      }
      SSLContext trustsAll = SSLContext.getInstance("TLS");
      trustsAll.init(null, null, null); // the JDK's own CAs: not the test's
      assertThatThrownBy(() -> RespConnection.open(redis.host(), redis.port(), 2_000, trustsAll.getSocketFactory()))
          .as("the certificate is signed by the test's CA only").isInstanceOf(SSLException.class);
    }
  }

  /** The binaries the tests find have TLS, so that no TLS test may be left out for want of it. */
  @Test
  void theTestsBinaryHasTls() {
    assertThat(RedisBinary.supportsTls(RedisServer.binary()))
        .as(RedisServer.binary() + ": Debian's and the embedded redis-server have TLS").isTrue();
  }

  /** A binary without TLS fails a TLS server at once, saying how to name one that has it. */
  @Test
  void aBinaryWithoutTlsFailsATlsServerNamingTheRemedy(@TempDir Path dir) throws IOException {
    Path binary = dir.resolve("redis-server");
    Files.writeString(binary, "#!/bin/sh\necho 'Redis server v=7.0.0 sha=00000000:0 malloc=libc bits=64'\n");
    assertThat(binary.toFile().setExecutable(true)).isTrue();
    assertThat(RedisBinary.supportsTls(binary)).isFalse();
    TestCertificates certs = TestCertificates.create(dir);
    assertThatThrownBy(() -> RedisServer.builder().tls(certs).start(binary))
        .isInstanceOf(RedisServer.TlsUnsupportedException.class)
        .hasMessageContaining(binary + " was built without TLS")
        .hasMessageContaining("-Dratelimit.redis.binary");
  }
}

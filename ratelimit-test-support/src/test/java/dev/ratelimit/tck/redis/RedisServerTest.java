package dev.ratelimit.tck.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.ConnectException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class RedisServerTest {
  private static RedisServer redis;

  @BeforeAll
  static void startServer() {
    redis = RedisServer.start();
  }

  @AfterAll
  static void stopServer() {
    redis.close();
  }

  @Test
  void startedServerAnswersAndIsARealChildProcess() {
    assertThat(redis.owned()).isTrue();
    assertThat(redis.host()).isEqualTo("127.0.0.1");
    assertThat(redis.port()).isNotEqualTo(6379);
    assertThat(redis.url()).isEqualTo("redis://127.0.0.1:" + redis.port());

    Optional<ProcessHandle> handle = ProcessHandle.of(redis.pid());
    assertThat(handle).isPresent();
    assertThat(handle.get().isAlive()).isTrue();
    assertThat(handle.get().parent().map(ProcessHandle::pid)).contains(ProcessHandle.current().pid());
    assertThat(redis.info("server"))
        .contains("process_id:" + redis.pid() + "\r\n")
        .contains("tcp_port:" + redis.port() + "\r\n");

    assertThat(redis.command("PING")).isEqualTo("PONG");
    assertThat(redis.command("SET", "rl:test:k", "v")).isEqualTo("OK");
    assertThat(redis.command("GET", "rl:test:k")).isEqualTo("v");
  }

  @Test
  void repliesAreDecodedAndErrorsAreThrown() {
    assertThat(redis.command("GET", "rl:test:missing")).isNull();
    assertThat(redis.command("INCRBY", "rl:test:n", 41)).isEqualTo(41L);
    assertThat(redis.command("SET", "rl:test:utf8", "größe €")).isEqualTo("OK");
    assertThat(redis.command("GET", "rl:test:utf8")).isEqualTo("größe €");
    assertThat(redis.command("EVAL", "return {1, 'two', {3, false}, -4}", 0))
        .isEqualTo(List.of(1L, "two", java.util.Arrays.asList(3L, null), -4L));

    RedisReplyException unknown =
        catchThrowableOfType(RedisReplyException.class, () -> redis.command("NO-SUCH-COMMAND"));
    assertThat(unknown.code()).isEqualTo("ERR");
    assertThat(unknown.getMessage()).startsWith("ERR unknown command");

    RedisReplyException wrongType =
        catchThrowableOfType(RedisReplyException.class, () -> redis.command("LPUSH", "rl:test:n", "x"));
    assertThat(wrongType.code()).isEqualTo("WRONGTYPE");

    // an error inside an array is an element; the rest of the reply is read, the socket stays in step
    Object mixed = redis.command("EVAL", "return {1, redis.error_reply('BOOM inside'), 3}", 0);
    assertThat(mixed).asInstanceOf(InstanceOfAssertFactories.LIST).hasSize(3).element(1)
        .isInstanceOfSatisfying(RedisReplyException.class,
            e -> assertThat(e.getMessage()).isEqualTo("BOOM inside"));
    assertThat(redis.command("PING")).isEqualTo("PONG");
  }

  @Test
  void debugCommandIsEnabled() {
    assertThat(redis.command("DEBUG", "SLEEP", "0")).isEqualTo("OK");
  }

  @Test
  void restartWaitsForItsPortHeldAMomentByAnother() throws Exception {
    try (RedisServer s = RedisServer.start()) {
      int port = s.port();
      s.stop();
      Socket holder = new Socket(); // bound, not listening: as a client's reconnecting socket holds it
      holder.bind(new java.net.InetSocketAddress("127.0.0.1", port));
      Thread release = new Thread(() -> {
        try {
          Thread.sleep(300); // real time is the point: the port is busy for a moment
          holder.close();
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      release.start();
      s.restart();
      release.join();
      assertThat(s.port()).isEqualTo(port);
      assertThat(s.command("PING")).isEqualTo("PONG");
    }
  }

  @Test
  void stopRefusesConnectionsAndRestartComesBackEmptyOnTheSamePort() throws Exception {
    try (RedisServer s = RedisServer.start()) {
      int port = s.port();
      long firstPid = s.pid();
      s.command("SET", "rl:test:k", "v");
      assertThat(s.command("DBSIZE")).isEqualTo(1L);

      s.restart(); // from running
      assertThat(s.port()).isEqualTo(port);
      assertThat(s.pid()).isNotEqualTo(firstPid);
      assertThat(ProcessHandle.of(firstPid).map(ProcessHandle::isAlive)).isNotEqualTo(Optional.of(true));
      assertThat(s.command("PING")).isEqualTo("PONG");
      assertThat(s.command("GET", "rl:test:k")).isNull();
      assertThat(s.command("DBSIZE")).isEqualTo(0L);
      assertThat(s.info("server")).contains("process_id:" + s.pid() + "\r\n");

      s.command("SET", "rl:test:k", "again");
      long secondPid = s.pid();
      s.stop();
      assertThat(ProcessHandle.of(secondPid).map(ProcessHandle::isAlive)).isNotEqualTo(Optional.of(true));
      assertThatThrownBy(() -> new Socket("127.0.0.1", port).close()).isInstanceOf(ConnectException.class);
      assertThatThrownBy(() -> s.command("PING")).hasCauseInstanceOf(ConnectException.class);
      s.stop(); // idempotent

      s.restart(); // from stopped
      assertThat(s.port()).isEqualTo(port);
      assertThat(ProcessHandle.of(s.pid())).isPresent();
      assertThat(s.command("DBSIZE")).isEqualTo(0L);
    }
  }

  @Test
  void aFailedStartReportsTheEndOfTheLog() throws Exception {
    try (RedisServer s = RedisServer.start()) {
      int port = s.port();
      s.stop();
      try (ServerSocket squatter = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
        assertThatThrownBy(s::restart)
            .isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("port " + port)
            .hasMessageContaining("Address already in use");
      }
      s.restart();
      assertThat(s.command("PING")).isEqualTo("PONG");
    }
  }

  @Test
  void closeStopsTheProcessAndDeletesItsDirectory() throws IOException {
    RedisServer s = RedisServer.start();
    String dir = configDir(s);
    assertThat(Path.of(dir)).isDirectory();
    long pid = s.pid();
    s.close();
    assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).isNotEqualTo(Optional.of(true));
    assertThat(Path.of(dir)).doesNotExist();
    assertThatThrownBy(s::restart).isInstanceOf(IllegalStateException.class);
    s.close(); // idempotent
  }

  @Test
  void embeddedBinaryIsExtractedOnceAndRuns() throws IOException {
    Path bin = RedisServer.embeddedBinary();
    assertThat(bin.getParent())
        .isEqualTo(Path.of(System.getProperty("java.io.tmpdir"), "ratelimit-redis-7.0.9"));
    assertThat(bin.getFileName().toString()).startsWith("redis-server-7.0.9-");
    assertThat(Files.isExecutable(bin)).isTrue();
    assertThat(RedisServer.embeddedBinary()).isSameAs(bin);
    assertThat(RedisBinary.version(bin)).isEqualTo("7.0.9");

    String before = System.getProperty(RedisBinary.PROPERTY);
    System.setProperty(RedisBinary.PROPERTY, "embedded");
    try {
      assertThat(RedisServer.binary()).isEqualTo(bin);
    } finally {
      if (before == null) {
        System.clearProperty(RedisBinary.PROPERTY);
      } else {
        System.setProperty(RedisBinary.PROPERTY, before);
      }
    }

    try (RedisServer s = RedisServer.start(bin, false)) {
      assertThat(s.info("server")).contains("redis_version:7.0.9\r\n");
      assertThat(s.command("DEBUG", "SLEEP", "0")).isEqualTo("OK");
      assertThat(s.command("SET", "rl:test:k", "v")).isEqualTo("OK");
    }
  }

  @Test
  void aDamagedExtractedBinaryIsNeverRun() throws IOException {
    Path shared = RedisServer.embeddedBinary();
    byte[] genuine = Files.readAllBytes(shared);
    Files.writeString(shared, "#!/bin/sh\necho not redis\n"); // another user's file, or a damaged one
    try {
      RedisBinary.forgetEmbedded();
      Path used = RedisServer.embeddedBinary();
      assertThat(used).as("a private copy").isNotEqualTo(shared);
      assertThat(Files.readAllBytes(used)).isEqualTo(genuine);
      assertThat(RedisBinary.version(used)).isEqualTo("7.0.9");
    } finally {
      Files.write(shared, genuine);
      RedisBinary.forgetEmbedded();
    }
    assertThat(RedisServer.embeddedBinary()).as("the genuine shared file is reused").isEqualTo(shared);
  }

  @Test
  void binaryPrefersRedisServerOnPath() {
    Path onPath = RedisBinary.onPath("redis-server");
    if (onPath != null) {
      assertThat(RedisServer.binary()).isEqualTo(onPath);
    } else {
      assertThat(RedisServer.binary()).isEqualTo(RedisServer.embeddedBinary());
    }
    assertThat(RedisBinary.major(RedisServer.binary())).isGreaterThanOrEqualTo(6);
  }

  @Test
  void aServerGivenByUrlIsNotOwnedAndNotStopped() {
    RedisServer external = RedisServer.external("redis://127.0.0.1:" + redis.port() + "/3");
    assertThat(external.owned()).isFalse();
    assertThat(external.pid()).isEqualTo(-1);
    assertThat(external.url()).isEqualTo("redis://127.0.0.1:" + redis.port() + "/3");
    assertThat(external.command("SET", "rl:test:db3", "x")).isEqualTo("OK");
    assertThat(external.command("CLIENT", "INFO").toString()).contains(" db=3 ");
    assertThat(redis.command("EXISTS", "rl:test:db3")).isEqualTo(0L); // db 0

    assertThatThrownBy(external::stop).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(external::restart).isInstanceOf(IllegalStateException.class);
    external.close();
    assertThat(redis.command("PING")).isEqualTo("PONG");
    assertThat(external.command("GET", "rl:test:db3")).isEqualTo("x"); // reconnects
    external.command("DEL", "rl:test:db3");
  }

  @Test
  void sharedIsOneInstanceOwnedUnlessRedisUrlIsSet() {
    RedisServer a = RedisServer.shared();
    RedisServer b = RedisServer.shared();
    assertThat(a).isSameAs(b);
    String env = System.getenv("REDIS_URL");
    if (env == null || env.isBlank()) {
      assertThat(a.owned()).isTrue();
      assertThat(ProcessHandle.of(a.pid())).isPresent();
    } else {
      assertThat(a.owned()).isFalse();
      assertThat(a.url()).isEqualTo(env.trim());
    }
    a.close(); // does not stop the shared server
    assertThat(b.command("PING")).isEqualTo("PONG");
  }

  private static String configDir(RedisServer s) {
    @SuppressWarnings("unchecked")
    List<Object> reply = (List<Object>) s.command("CONFIG", "GET", "dir");
    return (String) reply.get(1);
  }
}

package dev.ratelimit.tck.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class RedisSentinelsTest {
  @Test
  void aSentinelKnowsTheMasterAndItsReplicaAndAsksForItsPassword() throws Exception {
    try (RedisSentinels group = RedisSentinels.start(1, "data-pw", "sentinel-pw")) {
      RedisServer sentinel = group.sentinels().get(0);
      assertThat(group.sentinelNodes()).containsExactly("127.0.0.1:" + sentinel.port());
      assertThat(sentinel.info("server")).contains("redis_mode:sentinel");
      assertThat(sentinel.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", RedisSentinels.MASTER_NAME))
          .isEqualTo(List.of("127.0.0.1", Integer.toString(group.master().port())));
      group.master().command("SET", "k", "v");
      assertThat(group.master().command("WAIT", 1, 5_000)).isEqualTo(1L);
      assertThat(group.replica().command("GET", "k")).as("replicated").isEqualTo("v");
      try (RespConnection anonymous = RespConnection.open(sentinel.host(), sentinel.port())) {
        assertThatThrownBy(() -> anonymous.call("SENTINEL", "MASTERS")).hasMessageStartingWith("NOAUTH");
      }
      try (RespConnection anonymous = RespConnection.open(group.master().host(), group.master().port())) {
        assertThatThrownBy(() -> anonymous.call("GET", "k")).hasMessageStartingWith("NOAUTH");
      }
    }
  }

  @Test
  void threeSentinelsKnowEachOther() {
    try (RedisSentinels group = RedisSentinels.start(3, null, null)) {
      for (RedisServer s : group.sentinels()) {
        assertThat((List<?>) s.command("SENTINEL", "SENTINELS", RedisSentinels.MASTER_NAME)).hasSize(2);
      }
    }
  }
}

package dev.ratelimit.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ratelimit.KeyedPolicy;
import dev.ratelimit.Policy;
import dev.ratelimit.Reservation;
import dev.ratelimit.spi.Backend;
import dev.ratelimit.spi.NotRoutedException;
import dev.ratelimit.tck.ReservationContract;
import dev.ratelimit.tck.redis.RedisCluster;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/** The reservation contract on a 3-master Redis Cluster, the near-cache on (the default). */
class RedisClusterReservationContractTest extends ReservationContract {
  private static final String PREFIX = Clients.uniquePrefix();
  private static RedissonClient client;

  @BeforeAll
  static void connect() {
    client = Clients.cluster(RedisCluster.shared().urls());
  }

  @AfterAll
  static void disconnect() {
    client.shutdown();
  }

  @Override
  protected Backend newBackend() {
    return RedisBackend.builder(client).keyPrefix(PREFIX).timeout(Duration.ofSeconds(10)).build();
  }

  @Override
  protected int traces() {
    return 4;
  }

  /** A reservation across keys is one script: keys of the first key's slot, by a suffix found by trying. */
  @Override
  protected List<String> checkedTogether(List<String> keys) {
    return Clients.inOneSlot(PREFIX, keys);
  }

  /** Keys in different hash slots are never reserved in part: not routed, the failure mode decides, nothing held. */
  @Test
  void keysInDifferentSlotsAreNotReservedAtAll() {
    RedisKeys redisKeys = new RedisKeys(PREFIX);
    Policy p = Policy.of(5, Duration.ofSeconds(10)).withName("p");
    String a = key("a");
    String b = key("b");
    for (int i = 0; RedisKeys.slot((String) redisKeys.of(a, p).get(0))
        == RedisKeys.slot((String) redisKeys.of(b, p).get(0)); i++) {
      b = key("b~" + i);
    }
    Reservation r = limiter.reserve(List.of(KeyedPolicy.of(a, p), KeyedPolicy.of(b, p)), 2);
    assertThat(backendErrors).singleElement().isInstanceOf(NotRoutedException.class);
    backendErrors.clear();
    assertThat(r.decision().isDegraded()).as("the failure mode's answer (FAIL_OPEN)").isTrue();
    assertThat(r.marks()).containsOnlyNulls();
    assertThat(limiter.inspect(a, p).remaining()).isEqualTo(5);
    assertThat(limiter.inspect(b, p).remaining()).isEqualTo(5);
    r.cancel(); // holds nothing: sends nothing
    assertThat(backendErrors).isEmpty();
  }
}

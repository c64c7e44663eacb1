package dev.ratelimit.service.envoy;

import static dev.ratelimit.service.envoy.RlsClient.d;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.UInt64Value;
import dev.ratelimit.ManualClock;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.Code;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.DescriptorStatus;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse.RateLimit.Unit;
import io.envoyproxy.envoy.type.v3.RateLimitUnit;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * The Envoy endpoint over real gRPC (Netty), in memory, on a manual clock, with the reference
 * service's own example configurations loaded unchanged.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "ratelimit-service.grpc.enabled=true",
    "ratelimit-service.grpc.port=0",
    "ratelimit-service.grpc.address=127.0.0.1",
    "ratelimit-service.grpc.max-descriptors=8",
    "ratelimit-service.grpc.config=classpath:envoy/*.yaml"})
class EnvoyEndpointTest {
  /** A whole day: every unit's window starts here. */
  static final Instant START = Instant.ofEpochSecond(19_675L * 86_400);

  @TestConfiguration
  static class Clock {
    @Bean
    ManualClock clock() {
      return ManualClock.at(START);
    }
  }

  @Autowired
  GrpcServer server;
  @Autowired
  ManualClock clock;
  @Autowired
  MeterRegistry meters;
  RlsClient rls;

  @BeforeEach
  void connect() {
    clock.set(START);
    rls = new RlsClient(server.port());
  }

  @AfterEach
  void disconnect() {
    rls.close();
  }

  private static String unique(String name) {
    return name + "-" + System.nanoTime();
  }

  private static com.google.protobuf.Duration seconds(long seconds) {
    return com.google.protobuf.Duration.newBuilder().setSeconds(seconds).build();
  }

  @Test
  void referenceConfigLimitsEachDatabaseOnItsOwn() {
    // reference-config.yaml: mongo_cps, database users and default, 500 per second each
    RateLimitResponse full = rls.check("mongo_cps", 500, d("database", "users"));
    assertThat(full.getOverallCode()).isEqualTo(Code.OK);
    DescriptorStatus status = full.getStatuses(0);
    assertThat(status.getCurrentLimit().getRequestsPerUnit()).isEqualTo(500);
    assertThat(status.getCurrentLimit().getUnit()).isEqualTo(Unit.SECOND);
    assertThat(status.getLimitRemaining()).isZero();
    assertThat(status.getDurationUntilReset()).isEqualTo(seconds(1));

    RateLimitResponse over = rls.check("mongo_cps", d("database", "users"));
    assertThat(over.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(over.getStatuses(0).getCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(rls.check("mongo_cps", d("database", "default")).getStatuses(0).getLimitRemaining()).isEqualTo(499);

    clock.advance(Duration.ofSeconds(1)); // the next fixed window
    assertThat(rls.check("mongo_cps", d("database", "users")).getStatuses(0).getLimitRemaining()).isEqualTo(499);
  }

  @Test
  void nestedDescriptorsGetTheirOwnLimitPerValueAndSeveralDescriptorsAnswerTogether() {
    // README example 2: 5 marketing messages a day per number, 100 messages a day per number
    String number = unique("206");
    for (int i = 1; i <= 5; i++) {
      RateLimitResponse ok = rls.check("messaging",
          d("message_type", "marketing", "to_number", number), d("to_number", number));
      assertThat(ok.getOverallCode()).isEqualTo(Code.OK);
      assertThat(ok.getStatuses(0).getLimitRemaining()).isEqualTo(5 - i);
      assertThat(ok.getStatuses(0).getCurrentLimit().getUnit()).isEqualTo(Unit.DAY);
      assertThat(ok.getStatuses(1).getLimitRemaining()).isEqualTo(100 - i);
    }
    RateLimitResponse over = rls.check("messaging",
        d("message_type", "marketing", "to_number", number), d("to_number", number));
    assertThat(over.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(over.getStatuses(0).getCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(over.getStatuses(0).getDurationUntilReset()).isEqualTo(seconds(86_400));
    assertThat(over.getStatuses(1).getCode()).isEqualTo(Code.OK);
    // another number has its own limits
    assertThat(rls.check("messaging", d("message_type", "marketing", "to_number", unique("207")))
        .getStatuses(0).getLimitRemaining()).isEqualTo(4);
    // the level without a rate_limit is a placeholder: no limit
    RateLimitResponse placeholder = rls.check("messaging", d("message_type", "marketing"));
    assertThat(placeholder.getOverallCode()).isEqualTo(Code.OK);
    assertThat(placeholder.getStatuses(0).hasCurrentLimit()).isFalse();
  }

  @Test
  void aRequestRefusedByOneDescriptorChargesNone() {
    // all or nothing across descriptors, on purpose unlike the reference service (docs/envoy.md)
    String number = unique("208");
    for (int i = 0; i < 5; i++) {
      rls.check("messaging", d("message_type", "marketing", "to_number", number), d("to_number", number));
    }
    RateLimitResponse refused = rls.check("messaging",
        d("message_type", "marketing", "to_number", number), d("to_number", number));
    assertThat(refused.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(refused.getStatuses(1).getCode()).as("this one would pass").isEqualTo(Code.OK);
    assertThat(refused.getStatuses(1).getLimitRemaining()).as("and was not charged").isEqualTo(95);
    RateLimitResponse alone = rls.check("messaging", d("to_number", number));
    assertThat(alone.getStatuses(0).getLimitRemaining()).as("the refused request charged nothing here")
        .isEqualTo(100 - 6);
  }

  @Test
  void aDescriptorThatCanNeverPassLeavesTheOthersUncharged() {
    // a descriptor's own hits_addend above its rule's capacity (5 a day): refused, the other not checked
    String number = unique("209");
    RateLimitRequest tooMuch = RateLimitRequest.newBuilder().setDomain("messaging")
        .addDescriptors(d("message_type", "marketing", "to_number", number).toBuilder().setHitsAddend(UInt64Value.of(6)))
        .addDescriptors(d("to_number", number)).build();
    RateLimitResponse refused = rls.check(tooMuch);
    assertThat(refused.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(refused.getStatuses(0).getCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(refused.getStatuses(1).getCode()).isEqualTo(Code.OK);
    assertThat(rls.check("messaging", d("to_number", number)).getStatuses(0).getLimitRemaining())
        .as("the refused request charged nothing").isEqualTo(99);
  }

  @Test
  void descriptorsWithCostsOfTheirOwnAndTheSameDescriptorTwiceAreAllCounted() {
    String number = unique("210");
    // the same descriptor twice counts twice, as the reference counts it
    RateLimitResponse twice = rls.check("messaging", d("to_number", number), d("to_number", number));
    assertThat(twice.getOverallCode()).isEqualTo(Code.OK);
    assertThat(twice.getStatuses(1).getLimitRemaining()).isEqualTo(98);
    // different costs: checked cost by cost, each all or nothing, stopping at the first refusal
    RateLimitRequest mixed = RateLimitRequest.newBuilder().setDomain("messaging")
        .addDescriptors(d("message_type", "marketing", "to_number", number).toBuilder().setHitsAddend(UInt64Value.of(2)))
        .addDescriptors(d("to_number", number).toBuilder().setHitsAddend(UInt64Value.of(3))).build();
    RateLimitResponse ok = rls.check(mixed);
    assertThat(ok.getOverallCode()).isEqualTo(Code.OK);
    assertThat(ok.getStatuses(0).getLimitRemaining()).isEqualTo(3);
    assertThat(ok.getStatuses(1).getLimitRemaining()).isEqualTo(95);
  }

  @Test
  void aValueSpecificRuleBeatsTheKeyOnlyRule() {
    // README example 3: 10 per second per address, 50.0.0.5 refused
    RateLimitResponse banned = rls.check("edge_proxy_per_ip", d("remote_address", "50.0.0.5"));
    assertThat(banned.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(banned.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isZero();
    String address = unique("10.0.0");
    for (int i = 1; i <= 10; i++) {
      assertThat(rls.check("edge_proxy_per_ip", d("remote_address", address)).getStatuses(0).getLimitRemaining())
          .isEqualTo(10 - i);
    }
    assertThat(rls.check("edge_proxy_per_ip", d("remote_address", address)).getOverallCode())
        .isEqualTo(Code.OVER_LIMIT);
  }

  /** The limiter's metrics, per rule: Envoy's checks count as the HTTP API's do. */
  @Test
  void decisionsAreCountedPerRule() {
    String address = unique("10.1.0");
    double allowed = decisions("edge_proxy_per_ip.remote_address", "allowed");
    double denied = decisions("edge_proxy_per_ip.remote_address", "denied");
    for (int i = 0; i < 12; i++) {
      rls.check("edge_proxy_per_ip", d("remote_address", address));
    }
    assertThat(decisions("edge_proxy_per_ip.remote_address", "allowed") - allowed).isEqualTo(10);
    assertThat(decisions("edge_proxy_per_ip.remote_address", "denied") - denied).isEqualTo(2);
  }

  private double decisions(String policy, String outcome) {
    Counter counter = meters.find("ratelimit.decisions").tag("policy", policy)
        .tag("outcome", outcome).counter();
    return counter == null ? 0 : counter.count();
  }

  @Test
  void anUnlimitedDescriptorIsOkWithTheLargestRemaining() {
    // README example 5
    RateLimitResponse ldap = rls.check("internal", d("ldap", unique("x")));
    assertThat(ldap.getOverallCode()).isEqualTo(Code.OK);
    assertThat(Integer.toUnsignedLong(ldap.getStatuses(0).getLimitRemaining())).isEqualTo(4_294_967_295L);
    assertThat(ldap.getStatuses(0).hasCurrentLimit()).isFalse();
    assertThat(rls.check("internal", d("azure", unique("y"))).getStatuses(0).getLimitRemaining()).isEqualTo(99);
  }

  @Test
  void aShadowRuleCountsButNeverRefuses() {
    // README example 6: user-a in shadow mode at 10 per second, user-b enforced at 20
    String service = unique("auth-service");
    for (int i = 1; i <= 12; i++) {
      RateLimitResponse a = rls.check("example6", d("service", service, "user", "user-a"));
      assertThat(a.getOverallCode()).isEqualTo(Code.OK);
      assertThat(a.getStatuses(0).getCode()).isEqualTo(Code.OK);
      assertThat(a.getStatuses(0).getLimitRemaining()).isEqualTo(Math.max(0, 10 - i));
    }
    for (int i = 1; i <= 20; i++) {
      assertThat(rls.check("example6", d("service", service, "user", "user-b")).getOverallCode()).isEqualTo(Code.OK);
    }
    assertThat(rls.check("example6", d("service", service, "user", "user-b")).getOverallCode())
        .isEqualTo(Code.OVER_LIMIT);
  }

  @Test
  void theReferenceExampleFileBehavesAsItsReadmeSays() {
    String foo = unique("foo");
    // (foo, *) 2 per minute; (foo, *),(bar, *) 3; (bar, banned) 0; (baz, shady) shadow; (bay, *) unlimited
    assertThat(rls.check("rl", d("foo", foo)).getStatuses(0).getLimitRemaining()).isEqualTo(1);
    assertThat(rls.check("rl", d("foo", foo, "bar", "x")).getStatuses(0).getCurrentLimit().getRequestsPerUnit())
        .isEqualTo(3);
    assertThat(rls.check("rl", d("foo", foo, "bar", "banned")).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    for (int i = 0; i < 5; i++) {
      assertThat(rls.check("rl", d("foo", foo, "baz", "shady")).getOverallCode()).isEqualTo(Code.OK);
    }
    assertThat(rls.check("rl", d("foo", foo, "bay", "any")).getStatuses(0).getLimitRemaining()).isEqualTo(-1);
    assertThat(rls.check("rl", d("qux", foo)).getStatuses(0).getLimitRemaining()).isEqualTo(-1);
    // (category, account) replaces the rule named bkthomps: (foo, *),(bar, bkthomps) at 1 per minute
    String bkthomps = unique("f");
    for (int i = 0; i < 3; i++) {
      RateLimitResponse both = rls.check("rl", d("category", "account"), d("foo", bkthomps, "bar", "bkthomps"));
      assertThat(both.getStatuses(1).hasCurrentLimit()).as("replaced: not evaluated").isFalse();
      assertThat(both.getStatuses(1).getCode()).isEqualTo(Code.OK);
    }
    assertThat(rls.check("rl", d("foo", bkthomps, "bar", "bkthomps")).getStatuses(0).getLimitRemaining()).isZero();
  }

  @Test
  void aReplacedRuleIsNeitherCheckedNorCharged() {
    // README example 7
    String user = "bkthomps";
    RateLimitResponse both = rls.check("example7", d("key_1", "value_1", "user", user), d("key_2", "value_2", "user", user));
    assertThat(both.getStatuses(0).hasCurrentLimit()).isFalse();
    assertThat(both.getStatuses(1).getCurrentLimit().getRequestsPerUnit()).isEqualTo(10);
    assertThat(rls.check("example7", d("key_1", "value_1", "user", user)).getStatuses(0).getLimitRemaining())
        .isEqualTo(4);
  }

  @Test
  void anUnlimitedRuleIsNeverReplaced() {
    // as the reference: replaces drops only rules that are checked
    RateLimitResponse both = rls.check("api", d("internal", unique("i")), d("internal_caller", unique("c")));
    assertThat(both.getStatuses(0).getLimitRemaining()).isEqualTo(-1); // 4294967295: unlimited
    assertThat(both.getStatuses(1).getCurrentLimit().getRequestsPerUnit()).isEqualTo(5);
  }

  @Test
  void extensionsChooseAlgorithmWindowAndBurst() {
    String user = unique("u");
    for (int i = 1; i <= 3; i++) { // a token bucket of 3, refilling 10 a minute
      assertThat(rls.check("api", d("user", user)).getStatuses(0).getLimitRemaining()).isEqualTo(3 - i);
    }
    RateLimitResponse empty = rls.check("api", d("user", user));
    assertThat(empty.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(empty.getStatuses(0).getDurationUntilReset()).isEqualTo(seconds(6)); // one token in 6 s
    clock.advance(Duration.ofSeconds(6));
    assertThat(rls.check("api", d("user", user)).getOverallCode()).isEqualTo(Code.OK);

    String tenant = unique("t"); // a sliding log of 2 per 90 s; no unit to report
    rls.check("api", d("tenant", tenant));
    clock.advance(Duration.ofSeconds(30));
    RateLimitResponse second = rls.check("api", d("tenant", tenant));
    assertThat(second.getStatuses(0).getCurrentLimit().getUnit()).isEqualTo(Unit.UNKNOWN);
    RateLimitResponse third = rls.check("api", d("tenant", tenant));
    assertThat(third.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(third.getStatuses(0).getDurationUntilReset()).isEqualTo(seconds(60)); // the first leaves the log
  }

  @Test
  void wildcardsMatchAndShareThresholdSharesState() {
    String dir = unique("files/");
    assertThat(rls.check("api", d("files", dir + "a.pdf")).getStatuses(0).getLimitRemaining()).isEqualTo(1);
    assertThat(rls.check("api", d("files", dir + "b.csv")).getStatuses(0).getLimitRemaining()).isZero();
    assertThat(rls.check("api", d("files", dir + "c.txt")).getOverallCode()).isEqualTo(Code.OVER_LIMIT);

    String id = unique("id");
    assertThat(rls.check("api", d("path", "/api/" + id + "/action")).getStatuses(0).getLimitRemaining()).isZero();
    assertThat(rls.check("api", d("path", "/api/" + id + "-2/action")).getOverallCode()).isEqualTo(Code.OK);
    assertThat(rls.check("api", d("path", "/api/" + id + "/action")).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(rls.check("api", d("path", "/api/" + id + "/other")).getStatuses(0).hasCurrentLimit()).isFalse();
  }

  @Test
  void aDescriptorsOwnLimitOverridesTheRulesInAKnownDomain() {
    RateLimitDescriptor.RateLimitOverride twoAMinute = RateLimitDescriptor.RateLimitOverride.newBuilder()
        .setRequestsPerUnit(2).setUnit(RateLimitUnit.MINUTE).build();
    RateLimitDescriptor overridden = d("database", "users", "tenant", unique("t")).toBuilder()
        .setLimit(twoAMinute).build();
    RateLimitResponse first = rls.check("mongo_cps", overridden);
    assertThat(first.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(2);
    assertThat(first.getStatuses(0).getLimitRemaining()).isEqualTo(1);
    rls.check("mongo_cps", overridden);
    assertThat(rls.check("mongo_cps", overridden).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(rls.check("no-such-domain", overridden).getStatuses(0).hasCurrentLimit()).isFalse();
  }

  @Test
  void hitsAddendIsTheCostAndZeroOrUnsetIsOne() {
    String a = unique("a");
    assertThat(rls.check("api", 0, d("big", a)).getStatuses(0).getLimitRemaining()).isEqualTo(4);
    assertThat(rls.check("api", 3, d("big", a)).getStatuses(0).getLimitRemaining()).isEqualTo(1);
    // a descriptor's own hits_addend replaces the request's; 0 checks without counting
    RateLimitRequest peek = RateLimitRequest.newBuilder().setDomain("api").setHitsAddend(5)
        .addDescriptors(d("big", a).toBuilder().setHitsAddend(UInt64Value.of(0))).build();
    assertThat(rls.check(peek).getStatuses(0).getLimitRemaining()).isEqualTo(1);
    RateLimitRequest one = RateLimitRequest.newBuilder().setDomain("api").setHitsAddend(5)
        .addDescriptors(d("big", a).toBuilder().setHitsAddend(UInt64Value.of(1))).build();
    assertThat(rls.check(one).getStatuses(0).getLimitRemaining()).isZero();
    assertThat(rls.check(peek).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
  }

  @Test
  void aCostAboveTheCapacityIsOverTheLimitAndConsumesNothing() {
    String a = unique("a");
    RateLimitResponse tooMuch = rls.check("api", 6, d("big", a));
    assertThat(tooMuch.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(tooMuch.getStatuses(0).getCurrentLimit().getRequestsPerUnit()).isEqualTo(5);
    RateLimitRequest huge = RateLimitRequest.newBuilder().setDomain("api")
        .addDescriptors(d("big", a).toBuilder().setHitsAddend(UInt64Value.of(-1))).build(); // 2^64 - 1
    assertThat(rls.check(huge).getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(rls.check("api", 5, d("big", a)).getOverallCode()).isEqualTo(Code.OK);
  }

  @Test
  void anUnknownDomainOrAnUnmatchedDescriptorIsOkWithNoLimit() {
    RateLimitResponse unknown = rls.check("no-such-domain", d("a", "b"), d("c", "d"));
    assertThat(unknown.getOverallCode()).isEqualTo(Code.OK);
    assertThat(unknown.getStatusesList()).hasSize(2).allSatisfy(s -> {
      assertThat(s.getCode()).isEqualTo(Code.OK);
      assertThat(s.hasCurrentLimit()).isFalse();
    });
    RateLimitResponse unmatched = rls.check("mongo_cps", d("database", "other"), d(), d("database", "users", "x", "y"));
    assertThat(unmatched.getOverallCode()).isEqualTo(Code.OK);
    assertThat(unmatched.getStatusesList()).hasSize(3).noneMatch(DescriptorStatus::hasCurrentLimit);
  }

  @Test
  void anEmptyDomainOrDescriptorListIsAnInvalidArgument() {
    assertThatThrownBy(() -> rls.check("", d("database", "users")))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
          assertThat(e.getStatus().getDescription()).contains("domain must not be empty");
        });
    assertThatThrownBy(() -> rls.check("mongo_cps"))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
          assertThat(e.getStatus().getDescription()).contains("descriptors must not be empty");
        });
  }

  @Test
  void requestsBeyondTheBoundsAreInvalidArgumentsNamingTheBound() {
    RateLimitDescriptor[] nine = new RateLimitDescriptor[9];
    java.util.Arrays.fill(nine, d("database", "users"));
    assertThatThrownBy(() -> rls.check("mongo_cps", nine))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
          assertThat(e.getStatus().getDescription()).isEqualTo("the request has 9 descriptors, more than 8"
              + " (ratelimit-service.grpc.max-descriptors)");
        });
    String[] entries = new String[66];
    for (int i = 0; i < entries.length; i++) {
      entries[i] = "k" + i;
    }
    assertThatThrownBy(() -> rls.check("mongo_cps", d("database", "users"), d(entries)))
        .isInstanceOfSatisfying(StatusRuntimeException.class, e -> {
          assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
          assertThat(e.getStatus().getDescription()).isEqualTo("descriptor 1 has 33 entries, more than 32"
              + " (ratelimit-service.grpc.max-entries)");
        });
    RateLimitDescriptor[] eight = new RateLimitDescriptor[8];
    java.util.Arrays.fill(eight, d("database", unique("db")));
    assertThat(rls.check("mongo_cps", eight).getStatusesCount()).as("at the bound: answered").isEqualTo(8);
  }

  @Test
  void theGrpcPortListensOnTheConfiguredAddress() {
    assertThat(server.listenAddress()).asString().startsWith("/127.0.0.1:");
  }

  /** requests_per_unit 0: over the limit, and as the reference answers, the time to the end of the unit's window. */
  @Test
  void aZeroLimitAnswersTheTimeToTheEndOfItsUnit() {
    clock.advance(java.time.Duration.ofSeconds(20));
    RateLimitResponse banned = rls.check("rl", d("foo", unique("foo"), "bar", "banned"));
    assertThat(banned.getOverallCode()).isEqualTo(Code.OVER_LIMIT);
    assertThat(banned.getStatuses(0).getDurationUntilReset()).isEqualTo(seconds(40)); // unit: minute
  }

  /**
   * A connection that does not speak gRPC: grpc-java would log a stack trace at INFO for each;
   * here none passes, and the service logs one throttled line instead.
   */
  @Test
  void aGarbageConnectionLogsNoStackTrace() throws Exception {
    java.util.List<java.util.logging.LogRecord> passed = new java.util.concurrent.CopyOnWriteArrayList<>();
    java.util.logging.Handler handler = new java.util.logging.Handler() {
      @Override
      public void publish(java.util.logging.LogRecord record) {
        passed.add(record); // only what the logger's filter let through reaches a handler
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    java.util.logging.Logger connections = GarbageConnections.logger();
    java.util.logging.Level level = connections.getLevel();
    connections.setLevel(java.util.logging.Level.ALL);
    connections.addHandler(handler);
    long before = GarbageConnections.seen();
    try {
      for (int i = 0; i < 3; i++) {
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", server.port())) {
          socket.setSoTimeout(10_000);
          socket.getOutputStream().write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
          while (socket.getInputStream().read() >= 0) {
            // until the server closes it
          }
        }
      }
      long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
      while (GarbageConnections.seen() < before + 3 && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      assertThat(GarbageConnections.seen() - before).as("each failed connection reached the filter").isEqualTo(3);
      assertThat(passed).as("no record of gRPC's at INFO or below passes").isEmpty();
    } finally {
      connections.removeHandler(handler);
      connections.setLevel(level);
    }
  }

  @Test
  void healthCheckingAnswersServing() {
    assertThat(rls.health("")).isEqualTo(ServingStatus.SERVING);
    assertThat(rls.health("envoy.service.ratelimit.v3.RateLimitService")).isEqualTo(ServingStatus.SERVING);
    assertThatThrownBy(() -> rls.health("no.such.Service"))
        .isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND));
  }

  @Test
  void noHeadersUnlessAskedFor() {
    assertThat(rls.check("api", d("big", unique("h"))).getResponseHeadersToAddList()).isEqualTo(List.of());
  }
}
